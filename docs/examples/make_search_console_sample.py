#!/usr/bin/env python3
# Run from the repository root: python3 docs/examples/make_search_console_sample.py
# Generates docs/examples/search-console-sample.csv: a synthetic Search
# Console performance export (dimensions date and page) for the example.
import csv, datetime, math, random
random.seed(38)
groups = {}
with open("docs/examples/experiment-groups.csv") as f:
    for r in csv.DictReader(f):
        groups[r["url"]] = r["group"]
start = datetime.date(2026, 10, 20)
days = [start + datetime.timedelta(d) for d in range(-14, 14)]
rows = []
base = {u: math.exp(random.gauss(math.log(60), 0.7)) for u in groups}
ctr0 = {u: min(0.2, max(0.005, random.gauss(0.035, 0.01))) for u in groups}
pos = {u: round(random.uniform(3, 15), 1) for u in groups}
for d in days:
    after = d >= start
    week = 1 + 0.15 * math.cos(2 * math.pi * d.weekday() / 7)  # weekday pattern
    trend = 1.06 if after else 1.0                               # the season lifts every page
    for u, g in groups.items():
        imp = max(0, int(random.gauss(base[u] * week * trend, math.sqrt(base[u]))))
        if imp == 0:
            continue
        ctr = ctr0[u] * (1.12 if after and g == "variant" else 1.0)  # the variant's true effect: +12 % CTR
        clicks = sum(1 for _ in range(imp) if random.random() < ctr)
        p = max(1.0, round(random.gauss(pos[u], 0.8), 1))
        rows.append((d.isoformat(), u, clicks, imp, f"{clicks / imp:.4f}", p))
with open("docs/examples/search-console-sample.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["date", "page", "clicks", "impressions", "ctr", "position"])
    w.writerows(rows)
print(len(rows))
