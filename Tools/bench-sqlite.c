// The SQLite baseline of Tools/bench: the same election work as `vote voter authorize --from` and
// `vote cast --from`, done the way a competent engineer would do it on SQLite, in C with prepared statements.
//
//   bench-sqlite DB authorize VOTERS TOKENS_OUT BATCH
//       For each identity line: voter tag = HMAC-SHA256(secret, identity), a fresh 160-bit token drawn from
//       the OS, token hash = SHA-256 of its 32 base32 characters; INSERT into `voters` (UNIQUE place+tag and
//       place+token hash: a second authorisation is refused); the tokens go to TOKENS_OUT as "identity,token".
//   bench-sqlite DB cast VOTES BATCH
//       For each "token,candidate" line: token hash as above, then
//       UPDATE voters SET voted = 1, candidate = ? WHERE place = 1 AND token_hash = ? AND voted = 0
//       (0 rows changed = not authorised or already voted: rejected).
//
// Both commit BATCH rows per transaction (VoteLedger's block size), in WAL mode with synchronous=FULL, so
// every transaction is fsync'ed before the next starts, and with a page cache large enough for the table.
// Prints "ROWS ACCEPTED REJECTED SECONDS".
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "bench-sqlite: %s: %s\n", what, db ? sqlite3_errmsg(db) : "failed");
    exit(1);
}

static void exec(sqlite3 *db, const char *sql) {
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) fail(db, sql);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/// The canonical token form, as VoteLedger prints and hashes it: 32 upper-case base32 characters.
static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

static void base32(const unsigned char bytes[20], char out[33]) {
    for (int i = 0; i < 32; i++) {
        int bit = i * 5, byte = bit / 8, shift = bit % 8;
        unsigned value = (bytes[byte] << 8 | (byte + 1 < 20 ? bytes[byte + 1] : 0)) >> (11 - shift);
        out[i] = alphabet[value & 31];
    }
    out[32] = 0;
}

/// Strips separators and upper-cases, as `vote cast` accepts tokens; returns the length kept.
static int canonical(const char *text, char out[33]) {
    int n = 0;
    for (; *text && *text != ',' && *text != '\n'; text++) {
        char c = *text;
        if (c == '-' || c == ' ') continue;
        if (c >= 'a' && c <= 'z') c -= 32;
        if (n == 32) return -1;
        out[n++] = c;
    }
    out[n] = 0;
    return n;
}

static sqlite3 *open_db(const char *path) {
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) fail(db, "open");
    exec(db, "PRAGMA journal_mode=WAL");
    exec(db, "PRAGMA synchronous=FULL");
    exec(db, "PRAGMA cache_size=-1048576");  // 1 GiB: the whole table stays in memory
    exec(db, "CREATE TABLE IF NOT EXISTS voters (place INTEGER NOT NULL, voter_tag BLOB NOT NULL, "
             "token_hash BLOB NOT NULL, voted INTEGER NOT NULL DEFAULT 0, candidate INTEGER, "
             "UNIQUE(place, voter_tag), UNIQUE(place, token_hash))");
    return db;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: bench-sqlite DB authorize VOTERS TOKENS_OUT BATCH | DB cast VOTES BATCH\n");
        return 2;
    }
    int authorize = strcmp(argv[2], "authorize") == 0;
    long batch = atol(argv[authorize ? 5 : 4]);
    FILE *in = fopen(argv[3], "r");
    if (!in) fail(NULL, argv[3]);
    FILE *tokens = authorize ? fopen(argv[4], "wx") : NULL;
    if (authorize && !tokens) fail(NULL, argv[4]);
    sqlite3 *db = open_db(argv[1]);
    sqlite3_stmt *statement;
    const char *sql = authorize ? "INSERT INTO voters (place, voter_tag, token_hash) VALUES (1, ?, ?)"
                                : "UPDATE voters SET voted = 1, candidate = ? WHERE place = 1 AND token_hash = ? AND voted = 0";
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) fail(db, "prepare");

    unsigned char secret[32];
    RAND_bytes(secret, sizeof secret);
    char line[4096];
    long rows = 0, accepted = 0, rejected = 0, inBatch = 0;
    double start = now();
    exec(db, "BEGIN");
    while (fgets(line, sizeof line, in)) {
        size_t length = strcspn(line, "\r\n");
        line[length] = 0;
        if (length == 0) continue;
        rows++;
        unsigned char tokenHash[32];
        char token[33];
        if (authorize) {
            unsigned char tag[32], random[20];
            unsigned int tagLength = 32;
            HMAC(EVP_sha256(), secret, sizeof secret, (unsigned char *)line, length, tag, &tagLength);
            RAND_bytes(random, sizeof random);
            base32(random, token);
            SHA256((unsigned char *)token, 32, tokenHash);
            sqlite3_bind_blob(statement, 1, tag, 32, SQLITE_STATIC);
        } else {
            char *comma = strchr(line, ',');
            if (!comma || canonical(line, token) != 32) { rejected++; continue; }
            SHA256((unsigned char *)token, 32, tokenHash);
            sqlite3_bind_int(statement, 1, atoi(comma + 1));
        }
        sqlite3_bind_blob(statement, 2, tokenHash, 32, SQLITE_STATIC);
        int status = sqlite3_step(statement);
        sqlite3_reset(statement);
        int ok = status == SQLITE_DONE && sqlite3_changes(db) == 1;
        if (status != SQLITE_DONE && status != SQLITE_CONSTRAINT) fail(db, "step");
        if (ok) {
            accepted++;
            if (authorize) fprintf(tokens, "%s,%.4s-%.4s-%.4s-%.4s-%.4s-%.4s-%.4s-%.4s\n", line, token, token + 4,
                                   token + 8, token + 12, token + 16, token + 20, token + 24, token + 28);
        } else {
            rejected++;
        }
        if (++inBatch == batch) {
            // The tokens are delivered (flushed and synced) before the authorisations commit, as VoteLedger does.
            if (tokens && (fflush(tokens) != 0 || fsync(fileno(tokens)) != 0)) fail(NULL, "tokens file");
            exec(db, "COMMIT");
            exec(db, "BEGIN");
            inBatch = 0;
        }
    }
    if (tokens && (fflush(tokens) != 0 || fsync(fileno(tokens)) != 0)) fail(NULL, "tokens file");
    exec(db, "COMMIT");
    double seconds = now() - start;
    sqlite3_finalize(statement);
    if (sqlite3_close(db) != SQLITE_OK) fail(db, "close");
    if (tokens && fclose(tokens) != 0) fail(NULL, "tokens file");
    printf("%ld %ld %ld %.6f\n", rows, accepted, rejected, seconds);
    return 0;
}
