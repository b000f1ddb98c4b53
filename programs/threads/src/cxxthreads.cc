// C++ threads: std::thread workers summing slices under a std::mutex, a
// queue handed over with std::condition_variable, and std::async futures.
// What it prints does not depend on the interleaving.
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

static long long slice_sum(long long from, long long to) {
	long long s = 0;
	for (long long i = from; i < to; i++)
		s += i * i % 1000;
	return s;
}

int main() {
	// Workers add their slice's sum into one total under a mutex.
	long long total = 0;
	std::mutex mu;
	std::vector<std::thread> workers;
	for (int w = 0; w < 4; w++)
		workers.emplace_back([w, &total, &mu] {
			long long s = slice_sum(w * 50000LL, (w + 1) * 50000LL);
			std::lock_guard<std::mutex> lock(mu);
			total += s;
		});
	for (auto &t : workers)
		t.join();
	std::printf("threads: %lld (expected %lld)\n", total, slice_sum(0, 200000));

	// A producer hands numbers to a consumer through a queue.
	std::queue<int> q;
	std::condition_variable cv;
	bool done = false;
	long long consumed = 0;
	int items = 0;
	std::thread consumer([&] {
		std::unique_lock<std::mutex> lock(mu);
		for (;;) {
			cv.wait(lock, [&] { return !q.empty() || done; });
			while (!q.empty()) {
				consumed += q.front();
				q.pop();
				items++;
			}
			if (done)
				return;
		}
	});
	for (int i = 1; i <= 3000; i++) {
		{
			std::lock_guard<std::mutex> lock(mu);
			q.push(i);
		}
		cv.notify_one();
	}
	{
		std::lock_guard<std::mutex> lock(mu);
		done = true;
	}
	cv.notify_one();
	consumer.join();
	std::printf("queue: %d items, sum %lld\n", items, consumed);

	// std::async on new threads, futures collected in order.
	std::vector<std::future<long long>> fs;
	for (int k = 0; k < 3; k++)
		fs.push_back(std::async(std::launch::async, slice_sum, k * 10000LL, (k + 1) * 10000LL));
	long long asum = 0;
	for (auto &f : fs)
		asum += f.get();
	std::printf("async: %lld (expected %lld)\n", asum, slice_sum(0, 30000));

	// A promise fulfilled by another thread.
	std::promise<int> pr;
	std::future<int> fu = pr.get_future();
	std::thread setter([&pr] { pr.set_value(6 * 7); });
	std::printf("promise: %d\n", fu.get());
	setter.join();
	return 0;
}
