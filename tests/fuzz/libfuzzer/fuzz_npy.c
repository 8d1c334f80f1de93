/* libFuzzer harness: the .npy reader (npy_parse over the input bytes).  Any input must end in
 * CFE_OK or CFE_INPUT with a message, never a crash, an out-of-bounds read or an allocation
 * beyond the header's own size bound. */
#include <stddef.h>
#include <stdint.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        cf_set_max_bytes(UINT64_C(64) << 20); /* a fuzzer process is not the machine */
        init = 1;
    }
    npy_array a;
    cf_err e = {{0}};
    cf_status st = npy_parse("fuzz.npy", data, size, &a, &e);
    if (st == CFE_OK) {
        /* the array is what the header said: touch every byte of it */
        volatile uint8_t sum = 0;
        const uint8_t *p = a.data;
        for (size_t i = 0; i < (size_t)a.numel * a.itemsize; i++) sum ^= p[i];
        (void)sum;
        npy_free(&a);
    } else if (!e.msg[0]) {
        __builtin_trap(); /* every error names the file and the field */
    }
    return 0;
}
