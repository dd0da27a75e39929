#!/usr/bin/env python3
"""Counts ranked profiles with independent programs, for BallotsTests' peer comparison.

    python3 Tools/ranked_peers.py PROFILES.json > COUNTS.json

PROFILES.json: {"peers": [...], "profiles": [{"options": n, "seats": s, "ballots": [{"ranking": [0, 2], "weight": 1},
...]}]} (options are indexes 0..n-1, most preferred first; a ranking may be partial or empty). "peers" names the
programs to run, "python" (pref_voting and pyrankvote, the default) and/or "belenios" (belenios-tool).

For each profile, in order, it writes the winners each peer finds (sorted option indexes, or null when the peer
raised an exception):
  schulze:      pref_voting beat_path with winning votes (strength_function=support) on a ProfileWithTies
                using extended strict preference (ranked above unranked), i.e. VoteLedger's Schulze.
  irv_pv:       pref_voting instant_runoff (all options tied lowest are removed together; no tie-breaker).
  irv_prv:      pyrankvote instant_runoff_voting.
  stv1_prv:     pyrankvote single_transferable_vote for one seat.
  stv_scot_pv:  pref_voting stv_scottish for `seats` seats (SSI 2007/42, floating point, lot = seeded random).
  stv_prv:      pyrankvote single_transferable_vote for `seats` seats (not Scottish STV: quota votes/(seats+1),
                equal shares per paper, simultaneous transfers, bulk exclusion).
  irv_bel:      belenios-tool method stv --nseats=1.
  stv_bel:      belenios-tool method stv --nseats=`seats` (floating point, one election per round, ties by option
                order: see RankedPeerTests.swift for where it must agree with Scottish STV).
  schulze_bel:  belenios-tool method schulze --blank-allowed=false: the first group of its order (the unbeaten
                options), with strength winning votes then losing votes (pairs (W, L)).
Weights are integers: pref_voting takes them as counts, pyrankvote and belenios-tool get that many copies of the
ballot. Blank rankings are left out for pref_voting (they are not valid votes; its STV would count them in the
quota) and for belenios-tool (its STV counts an empty ballot in the quota as well). belenios-tool reads a ballot as
one rank per option (1 best, 0 unranked); a ranking [2, 0] of 3 options is written [2, 0, 1].

If python3 lacks a module, or belenios-tool is missing when asked for, it prints one line saying what to install and
exits with status 3.
"""

import json
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def import_python_peers():
    global pyrankvote, instant_runoff, beat_path, ProfileWithTies, stv_scottish
    try:
        import pyrankvote
        from pref_voting.iterative_methods import instant_runoff
        from pref_voting.margin_based_methods import beat_path
        from pref_voting.profiles_with_ties import ProfileWithTies
        from pref_voting.proportional_methods import stv_scottish
    except ImportError as error:
        print(f"missing Python module ({error.name}): pip install pyrankvote pref_voting", file=sys.stderr)
        sys.exit(3)


def pref_voting_profile(options, ballots):
    rankings, counts = [], []
    for ballot in ballots:
        if ballot["ranking"]:
            rankings.append({option: place + 1 for place, option in enumerate(ballot["ranking"])})
            counts.append(ballot["weight"])
    profile = ProfileWithTies(rankings, rcounts=counts, candidates=list(range(options)))
    profile.use_extended_strict_preference()
    return profile


def pyrankvote_ballots(candidates, ballots):
    copies = []
    for ballot in ballots:
        for _ in range(ballot["weight"]):
            copies.append(pyrankvote.Ballot(ranked_candidates=[candidates[o] for o in ballot["ranking"]]))
    return copies


def indexes(winners):
    return sorted(int(candidate.name) for candidate in winners)


def attempt(peer):
    """The peer's winners, or None when the peer raises (pyrankvote's STV stops with "Illegal state" on some
    profiles): the comparison then skips that peer for that profile and counts it."""
    try:
        return peer()
    except Exception:
        return None


def count_python(profile):
    options, seats, ballots = profile["options"], profile["seats"], profile["ballots"]
    pv = pref_voting_profile(options, ballots)
    candidates = [pyrankvote.Candidate(str(option)) for option in range(options)]
    prv = pyrankvote_ballots(candidates, ballots)

    def pyrankvote_stv(number_of_seats):
        return indexes(pyrankvote.single_transferable_vote(candidates, prv, number_of_seats).get_winners())

    return {
        "schulze": attempt(lambda: sorted(beat_path(pv, strength_function=pv.support))),
        "irv_pv": attempt(lambda: sorted(instant_runoff(pv))),
        "irv_prv": attempt(lambda: indexes(pyrankvote.instant_runoff_voting(candidates, prv).get_winners())),
        "stv1_prv": attempt(lambda: pyrankvote_stv(1)),
        "stv_scot_pv": attempt(lambda: sorted(stv_scottish(pv, num_seats=seats, rng=random.Random(0)))),
        "stv_prv": attempt(lambda: pyrankvote_stv(seats)),
    }


def belenios_ballots(options, ballots):
    """Each non-blank ballot, `weight` times, as belenios' rank vector (1 best, 0 unranked), in JSON."""
    lines = []
    for ballot in ballots:
        if ballot["ranking"]:
            ranks = [0] * options
            for place, option in enumerate(ballot["ranking"]):
                ranks[option] = place + 1
            lines += [json.dumps(ranks)] * ballot["weight"]
    return ("[" + ",".join(lines) + "]").encode()


def belenios(arguments, ballots):
    """belenios-tool method ARGUMENTS on BALLOTS: its JSON answer. A failure (status, first line of stderr) is
    raised: the comparison must not pass on a peer that did not count."""
    run = subprocess.run(["belenios-tool", "method", *arguments], input=ballots, capture_output=True)
    if run.returncode != 0:
        first = (run.stderr.decode(errors="replace").strip().splitlines() or [""])[0]
        raise RuntimeError(f"belenios-tool method {' '.join(arguments)} exited with {run.returncode}: {first}")
    return json.loads(run.stdout)


def count_belenios(profile):
    options, seats, ballots = profile["options"], profile["seats"], profile["ballots"]
    written = belenios_ballots(options, ballots)
    schulze = belenios(["schulze", "--blank-allowed=false", f"--nchoices={options}"], written)["winners"]
    return {
        "irv_bel": sorted(belenios(["stv", "--nseats=1"], written)["winners"]),
        "stv_bel": sorted(belenios(["stv", f"--nseats={seats}"], written)["winners"]),
        "schulze_bel": sorted(schulze[0]) if schulze else [],
    }


def main():
    random.seed(0)  # pyrankvote breaks some ties with `random`; the comparison skips tied profiles anyway
    with open(sys.argv[1]) as file:
        document = json.load(file)
    profiles, peers = document["profiles"], document.get("peers", ["python"])
    results = [{} for _ in profiles]
    if "python" in peers:
        import_python_peers()
        for result, profile in zip(results, profiles):
            result.update(count_python(profile))
    if "belenios" in peers:
        if shutil.which("belenios-tool") is None:
            print("belenios-tool not found: apt-get install belenios-tool", file=sys.stderr)
            sys.exit(3)
        # One belenios-tool per profile and method (about 4 ms each), two at a time.
        with ThreadPoolExecutor(max_workers=2) as pool:
            for result, counts in zip(results, pool.map(count_belenios, profiles)):
                result.update(counts)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
