#ifndef COUNTERSIGN_CLIBCRYPTO_SHIM_H
#define COUNTERSIGN_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#endif
