/* aclnn status codes (CANN values).  Every aclnn* function returns one of these. */
#ifndef ACLNN_STATUS_H
#define ACLNN_STATUS_H

#include <stdint.h>

typedef int32_t aclnnStatus;

#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001      /* a required pointer argument is NULL */
#define ACLNN_ERR_PARAM_INVALID 161002      /* dtype / shape / rank / attribute / workspace check failed */
#define ACLNN_ERR_RUNTIME_ERROR 361001      /* execution failed at run time (e.g. allocation) */
#define ACLNN_ERR_INNER 561000              /* internal error */
#define ACLNN_ERR_INNER_TILING_ERROR 561002 /* cann-kernel profile only (NsaCompressGrad tiling) */
#define ACLNN_ERR_INNER_NULLPTR 561103      /* internal NULL */

#endif
