/* encore: the re-entrancy guard's definition (see guard.h). */
#include "base/guard.h"

__thread enc_thread enc_thr __attribute__((tls_model("initial-exec")));
