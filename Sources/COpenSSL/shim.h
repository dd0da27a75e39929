#ifndef VOTELEDGER_COPENSSL_SHIM_H
#define VOTELEDGER_COPENSSL_SHIM_H

// The low-level SHA256_* API is the fastest path (no EVP dispatch, context on the stack) and is still
// supported in OpenSSL 3; we opt out of its deprecation markers rather than pay for EVP per leaf hash.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <stddef.h>
#include <stdint.h>

/// BIO_get_mem_data is a macro; Swift cannot call it directly.
static inline long vl_bio_mem_data(BIO *bio, char **out) {
    return BIO_get_mem_data(bio, out);
}

/// The type of an EVP_PKEY, so Swift can refuse a PEM key that is not Ed25519.
static inline int vl_pkey_is_ed25519(const EVP_PKEY *pkey) {
    return EVP_PKEY_get_id(pkey) == EVP_PKEY_ED25519;
}

#endif
