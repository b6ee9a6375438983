/* encore: the re-entrancy guard's definition (see guard.h). */
#include "base/guard.h"

__thread int enc_tls_guard __attribute__((tls_model("initial-exec")));
