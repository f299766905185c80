#ifndef COUNTERSIGN_CLIBCRYPTO_SHIM_H
#define COUNTERSIGN_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/bn.h>

/* The GCM tag controls are macros aliasing macros; named constants reach Swift reliably. */
static const int countersign_gcm_get_tag = EVP_CTRL_GCM_GET_TAG;
static const int countersign_gcm_set_tag = EVP_CTRL_GCM_SET_TAG;
#endif
