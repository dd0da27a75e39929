"""PostgreSQL for the benchmarks (Tools/bench-http and Tools/bench): a throwaway cluster made by Tools/pg-cluster,
and the pgbench baseline both scripts run, so each exists once.

The cluster is durable as VoteLedger is (pg-cluster: fsync and synchronous_commit on; full page writes too);
shared_buffers holds the tables and indexes, and checkpoints are spaced out (the scripts run one before each
measured line, so none falls inside a run). Every client reaches it over its Unix socket.

The pgbench baseline: a table voters(token_hash bytea primary key, place int, voted boolean) pre-filled with N
rows, and `pgbench -c 64 -j 2 -M prepared` casting each token once, one transaction per vote (PGBENCH_SCRIPT says
how each client finds its tokens): an UPDATE that must find the token unvoted, as the ledger's rule does; no
candidate, no receipt, no HTTP. Its TPS and latency percentiles come from its per-transaction log (-l); exactly N
rows must be voted.
"""
import glob, os, re, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_BIN = "/usr/lib/postgresql/15/bin"
CLIENTS, THREADS = 64, 2

# One pgbench transaction casts one vote. pgbench has no per-client transaction counter, but a client's
# variables live as long as the client: `-D n=0` starts every client's n at 0 and the first line counts
# that client's transactions. Client c (`:client_id`, 0-63) with -t K then casts tokens c*K … c*K+K-1:
# every token exactly once over the 64 clients, with no shared counter, no extra statement and no round
# trip beyond the vote itself. A token is the 8 bytes of its number; the server hashes it (SHA-256) as
# VoteLedger hashes the token it receives, and the UPDATE must find it unvoted, as the ledger's rule does.
PGBENCH_SCRIPT = """\\set n :n + 1
\\set i :client_id * {per_client} + :n - 1
UPDATE voters SET voted = true WHERE place = 1 AND token_hash = sha256(int8send(:i::bigint)) AND voted = false;
"""


def run(args, **kw):
    try:
        return subprocess.run(args, check=True, capture_output=True, text=True, **kw)
    except subprocess.CalledProcessError as error:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {' '.join(args[:3])} failed: "
                 f"{(error.stderr or error.stdout).strip()[-500:]}")


def offers_store(vote, command):
    """Whether the built `vote` keeps ledgers in PostgreSQL: its `command` takes `--store` (issue 25) and it was
    built with the server (VOTE_WITHOUT_SERVER=1 leaves the PostgreSQL store out, Package.swift, and such a `vote`
    lists `--store` but refuses it). The scripts build `vote` in the environment they run in."""
    if os.environ.get("VOTE_WITHOUT_SERVER"):
        return False
    return "--store" in subprocess.run([vote, command, "--help"], capture_output=True, text=True).stdout


def database_ledger(vote, cluster, work, database, opens_in=4):
    """A ledger made by `vote init --store` in a new database of `cluster`, keys and state under `work`: one place
    whose voting opens `opens_in` seconds from now and 8 candidates. Returns the options naming it (`--store URL
    --keys DIR`), the environment to run `vote` in, and when voting opens (epoch seconds)."""
    where = ["--store", cluster.url(cluster.new_database(database)), "--keys", os.path.join(work, "keys")]
    env = dict(os.environ, VOTE_STATE_DIR=os.path.join(work, "state"))
    run([vote, "init", "--name", "bench", "--no-passphrase"] + where, env=env)
    run([vote, "place", "create", "--name", "National", "--registration", f"now/+{opens_in}s",
         "--voting", f"+{opens_in}s/+1d"] + where, env=env)
    opens = time.time() + opens_in
    for c in range(8):
        run([vote, "candidate", "register", "--place", "1", "--name", f"Candidate {c + 1}"] + where, env=env)
    return where, env, opens


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


class Cluster:
    """A cluster in `work`/postgres for up to `votes` rows a table, stopped (as a crash would: it is thrown away)
    by the cleanup it appends to `cleanups`."""

    def __init__(self, work, votes, cleanups):
        if not os.path.exists(os.path.join(PG_BIN, "pgbench")):
            sys.exit(f"PostgreSQL 15 is missing ({PG_BIN}): apt-get install -y postgresql-15")
        self.dir = os.path.join(work, "postgres")
        tool = os.path.join(ROOT, "Tools", "pg-cluster")
        # Connections: pgbench's 64, a peer's pool of 64, or up to four `vote serve` processes' pools, one at a time.
        shared_mb = max(256, votes * 1024 // (1 << 20))
        cleanups.append(lambda: subprocess.run([tool, "stop", self.dir, "immediate"], capture_output=True))
        run([tool, "start", self.dir, f"shared_buffers={shared_mb}MB", "max_connections=300", "full_page_writes=on",
             "max_wal_size=8GB", "checkpoint_timeout=1h"], env=dict(os.environ, PG_BIN=PG_BIN))

    def url(self, database):
        """The libpq URL of a database, as `vote --store` takes it."""
        return f"postgres://postgres@/{database}?host={self.dir}"

    def sql(self, database, statement, stdin=None):
        """Runs one statement with psql over the cluster's socket; returns what it printed."""
        return run([f"{PG_BIN}/psql", "-h", self.dir, "-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1",
                    "-qAt", "-c", statement], input=stdin).stdout.strip()

    def new_database(self, database):
        """Creates an empty database; returns its name."""
        self.sql("postgres", f"CREATE DATABASE {database}")
        return database

    def checkpoint(self):
        """Writes out every dirty page now, so that no earlier line's pages are written during the next."""
        self.sql("postgres", "CHECKPOINT")

    def settings(self):
        return self.sql("postgres", "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) "
                                    "FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', "
                                    "'wal_sync_method', 'full_page_writes', 'shared_buffers')")


def bench_pgbench(work, cluster, votes, problems, database="pgbench"):
    """The pgbench baseline (the module doc says what it does) over `votes` tokens, a multiple of 64, in a new
    database; returns its figures and appends to `problems` what does not add up."""
    db = cluster.new_database(database)
    print(f"pgbench: filling voters with {votes} rows …", file=sys.stderr)
    cluster.sql(db, "CREATE TABLE voters (token_hash bytea PRIMARY KEY, place int NOT NULL, "
                    "voted boolean NOT NULL DEFAULT false)")
    cluster.sql(db, f"INSERT INTO voters SELECT sha256(int8send(i)), 1, false FROM generate_series(0, {votes - 1}) i")
    cluster.sql(db, "VACUUM ANALYZE voters")
    cluster.checkpoint()

    per_client = votes // CLIENTS
    script = os.path.join(work, f"{db}.sql")
    with open(script, "w") as f:
        f.write(PGBENCH_SCRIPT.format(per_client=per_client))
    log_prefix = os.path.join(work, f"{db}-txlog")
    print(f"pgbench: casting {votes} votes …", file=sys.stderr)
    out = run([f"{PG_BIN}/pgbench", "-h", cluster.dir, "-U", "postgres", "-n", "-M", "prepared", "-c", str(CLIENTS),
               "-j", str(THREADS), "-t", str(per_client), "-D", "n=0", "-f", script, "-l", "--log-prefix", log_prefix,
               db], cwd=work).stdout
    print(out.strip(), file=sys.stderr)
    tps = float(re.search(r"^tps = ([\d.]+)", out, re.M).group(1))
    processed = int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))
    failed = re.search(r"number of failed transactions: (\d+)", out)
    failed = int(failed.group(1)) if failed else 0

    # Per-transaction log: client, transaction number, latency in µs, script, epoch seconds, µs.
    latencies = []
    for path in glob.glob(log_prefix + ".*"):
        with open(path) as f:
            latencies.extend(int(line.split()[2]) for line in f)
    latencies.sort()
    voted = int(cluster.sql(db, "SELECT count(*) FROM voters WHERE voted"))
    rows = int(cluster.sql(db, "SELECT count(*) FROM voters"))
    if processed != votes or failed:
        problems.append(f"pgbench: {processed} transactions processed, {failed} failed, expected {votes}")
    if voted != votes or rows != votes: problems.append(f"pgbench: {voted} of {rows} rows voted, expected {votes}")
    if len(latencies) != votes: problems.append(f"pgbench logged {len(latencies)} transactions, expected {votes}")
    return {
        "votes_per_s": tps, "p50_ms": percentile(latencies, 50) / 1000, "p99_ms": percentile(latencies, 99) / 1000,
        "mean_ms": statistics.fmean(latencies) / 1000, "max_ms": latencies[-1] / 1000,
        "accepted": voted, "pgbench_output": out,
    }
