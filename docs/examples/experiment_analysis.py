#!/usr/bin/env python3
"""Clicks per group before and after a headgate split test, and a
difference-in-differences with a bootstrap confidence interval.

Python 3 standard library only. docs/experiments.md walks through it:

    python3 docs/examples/experiment_analysis.py \
        --groups docs/examples/experiment-groups.csv \
        --performance docs/examples/search-console-sample.csv \
        --start 2026-10-20

--groups is `headgate experiment export -format csv` (url,group).
--performance is a Search Console performance export by date and page
(the API's searchanalytics.query with dimensions ["date", "page"], or the
bulk export's url_impressions table), with at least the columns date,
page, clicks and impressions. Rows dated before --start are "before", the
rest (from --start + --lag days) "after"; --end bounds them.

The unit is the page: a page of the groups file with no row on a day had
no impressions that day (Search Console leaves such rows out), so it
counts as 0 clicks. For each page, d = (mean daily clicks after) -
(mean daily clicks before); the difference-in-differences is
mean(d | variant) - mean(d | control): the variant's change beyond the
change every page saw (season, an update, a holiday). The interval
resamples pages with replacement within each group (--resamples times,
seeded by --seed, so a run is reproducible) and takes the 2.5th and
97.5th percentiles.
"""
import argparse
import csv
import datetime
import json
import random
import statistics
import sys


def read_groups(path):
    groups = {}
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["group"] not in ("control", "variant"):
                sys.exit(f"{path}: group {row['group']!r} is neither control nor variant")
            groups[row["url"]] = row["group"]
    return groups


def daily_clicks(path, groups, start, lag, end):
    """page -> (clicks before, days before, clicks after, days after)."""
    before, after = {u: 0 for u in groups}, {u: 0 for u in groups}
    days_before, days_after = set(), set()
    after_from = start + datetime.timedelta(days=lag)
    with open(path, newline="", encoding="utf-8-sig") as f:
        for row in csv.DictReader(f):
            day = datetime.date.fromisoformat(row["date"])
            page = row["page"]
            if end and day >= end:
                continue
            if day < start:
                days_before.add(day)
                if page in groups:
                    before[page] += int(row["clicks"])
            elif day >= after_from:
                days_after.add(day)
                if page in groups:
                    after[page] += int(row["clicks"])
    if not days_before or not days_after:
        sys.exit("the export needs days before --start and after it (and its --lag)")
    nb, na = len(days_before), len(days_after)
    return {u: (before[u] / nb, after[u] / na) for u in groups}, nb, na


def did(deltas_v, deltas_c):
    return statistics.fmean(deltas_v) - statistics.fmean(deltas_c)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--groups", required=True)
    ap.add_argument("--performance", required=True)
    ap.add_argument("--start", required=True, type=datetime.date.fromisoformat, help="the test's start (YYYY-MM-DD)")
    ap.add_argument("--end", type=datetime.date.fromisoformat, help="ignore rows from this day on")
    ap.add_argument("--lag", type=int, default=0, help="days after --start left out while crawlers pick the change up")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = ap.parse_args(argv)

    groups = read_groups(a.groups)
    per_page, nb, na = daily_clicks(a.performance, groups, a.start, a.lag, a.end)
    table = {}
    deltas = {"control": [], "variant": []}
    for g in ("control", "variant"):
        pages = [u for u in groups if groups[u] == g]
        b = [per_page[u][0] for u in pages]
        af = [per_page[u][1] for u in pages]
        deltas[g] = [y - x for x, y in zip(b, af)]
        table[g] = {"pages": len(pages), "before": statistics.fmean(b), "after": statistics.fmean(af)}
    if table["control"]["pages"] < 2 or table["variant"]["pages"] < 2:
        sys.exit("each group needs at least two pages")
    est = did(deltas["variant"], deltas["control"])
    rng = random.Random(a.seed)
    boots = []
    for _ in range(a.resamples):
        v = rng.choices(deltas["variant"], k=len(deltas["variant"]))
        c = rng.choices(deltas["control"], k=len(deltas["control"]))
        boots.append(did(v, c))
    boots.sort()
    lo = boots[int(0.025 * (len(boots) - 1))]
    hi = boots[int(0.975 * (len(boots) - 1))]
    # Relative to what the variant pages would have had: their own level
    # before plus the control's change.
    counterfactual = table["variant"]["before"] + (table["control"]["after"] - table["control"]["before"])
    rel = est / counterfactual if counterfactual else float("nan")
    out = {
        "days_before": nb, "days_after": na, "groups": table,
        "did": est, "ci95": [lo, hi], "relative": rel, "resamples": a.resamples, "seed": a.seed,
    }
    if a.json:
        json.dump(out, sys.stdout, indent=2)
        print()
        return
    print(f"clicks per page per day, {nb} days before and {na} days after")
    print(f"{'group':<8} {'pages':>5} {'before':>8} {'after':>8} {'change':>8}")
    for g in ("control", "variant"):
        t = table[g]
        ch = (t["after"] / t["before"] - 1) * 100 if t["before"] else float("nan")
        print(f"{g:<8} {t['pages']:>5} {t['before']:>8.3f} {t['after']:>8.3f} {ch:>+7.1f}%")
    print(f"difference-in-differences: {est:+.3f} clicks per page per day ({rel * 100:+.1f} %), "
          f"95 % CI [{lo:+.3f}, {hi:+.3f}] ({a.resamples} bootstrap resamples of pages, seed {a.seed})")
    if lo > 0:
        print("the variant gained clicks beyond the control's change")
    elif hi < 0:
        print("the variant lost clicks beyond the control's change")
    else:
        print("no difference the data can tell from noise: run longer, or on more pages")


if __name__ == "__main__":
    main()
