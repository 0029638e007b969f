package vision

/*
#include <stdlib.h> // defines __GLIBC__ on glibc
#ifdef __GLIBC__
#include <malloc.h>
#endif

// towerd_keep_heap keeps the C heap's freed memory for the next photo.
// It returns 1 when the C library took the settings.
static int towerd_keep_heap(void) {
#ifdef __GLIBC__
	// A photo's Mats are a few megabytes each: by default glibc maps such
	// blocks fresh and unmaps them when freed (or trims the heap's top), so
	// every photo faults its pages in again. 32 MiB holds a 4K colour
	// frame; up to 128 MiB free at the heap's top is kept.
	return mallopt(M_MMAP_THRESHOLD, 32 << 20) && mallopt(M_TRIM_THRESHOLD, 128 << 20);
#else
	return 0;
#endif
}
*/
import "C"

import "sync"

// keepHeap makes the C heap keep the memory OpenCV frees between photos
// (once per process, for glibc). Faulting those pages in again took 60%
// of reading a 640x480 photo on a VM whose page faults are dear: 11 ms
// instead of 4.5 (BenchmarkRead640, one core).
var keepHeap = sync.OnceValue(func() bool { return C.towerd_keep_heap() == 1 })
