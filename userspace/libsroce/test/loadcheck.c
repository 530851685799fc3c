// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Loads the plugin named by argv[1] against whatever libibverbs.so.1 the
 * dynamic linker finds (the test points LD_LIBRARY_PATH at a stub) and
 * prints how often the plugin registered itself.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	void *h;
	int *reg;

	if (argc != 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	reg = dlsym(h, "stub_registered");
	if (!reg) {
		printf("not the stub libibverbs\n");
		return 1;
	}
	printf("registered=%d\n", *reg);
	return 0;
}
