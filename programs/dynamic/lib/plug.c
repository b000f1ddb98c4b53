/* libplug.so: the library programs/dynamic/src/plugin.c loads with
   dlopen, calls, unloads and loads again. */

/* plug_work folds n values of the caller's f (a callback into the
   program: the hot loop crosses the two objects). */
long plug_work(long (*f)(long), long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += f(i) ^ (s >> 3);
	return s;
}

/* plug_drive calls f and uses its result, so its own frame (and the
   return address into this library) stays on the stack while f runs. */
long plug_drive(long (*f)(long), long x)
{
	return f(x) * 3 + 1;
}
