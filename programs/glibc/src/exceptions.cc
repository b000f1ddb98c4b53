// C++ exceptions through several frames, RAII destructors, standard
// containers and strings.
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

static int destroyed;

struct Guard {
	int id;
	explicit Guard(int i) : id(i) {}
	~Guard() { destroyed += id; }
};

struct Odd : std::runtime_error {
	int value;
	explicit Odd(int v) : std::runtime_error("odd value " + std::to_string(v)), value(v) {}
};

static int check(int v, int depth)
{
	Guard g(depth);
	if (depth > 0)
		return check(v, depth - 1) + 1;
	if (v % 7 == 3)
		throw Odd(v);
	if (v % 11 == 5)
		throw std::out_of_range("range " + std::to_string(v));
	return v;
}

int main()
{
	std::map<std::string, int> counts;
	std::vector<std::unique_ptr<std::string>> log;
	long sum = 0;
	for (int v = 0; v < 200; v++) {
		try {
			sum += check(v, v % 9);
			counts["ok"]++;
		} catch (const Odd &e) {
			counts["odd"]++;
			sum -= e.value;
			if (log.size() < 5)
				log.push_back(std::make_unique<std::string>(e.what()));
		} catch (const std::exception &e) {
			counts[std::string("other:") + (e.what()[0] == 'r' ? "range" : "?")]++;
		}
	}
	for (const auto &kv : counts)
		std::printf("%s=%d\n", kv.first.c_str(), kv.second);
	for (const auto &s : log)
		std::printf("logged: %s\n", s->c_str());
	std::printf("sum %ld destroyed %d\n", sum, destroyed);
	return static_cast<int>((sum + destroyed) % 103) + 1;
}
