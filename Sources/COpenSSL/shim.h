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
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
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

/// SSL_set_tlsext_host_name (SNI) and SSL_CTX_set_min_proto_version are macros; Swift cannot call them.
static inline int vl_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline int vl_ssl_ctx_require_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

/// A peer that closes the connection without a TLS close_notify ends the answer (its length is checked by
/// the HTTP layer) instead of failing it: many servers do.
static inline void vl_ssl_ctx_ignore_unexpected_eof(SSL_CTX *context) {
    SSL_CTX_set_options(context, SSL_OP_IGNORE_UNEXPECTED_EOF);
}

#endif
