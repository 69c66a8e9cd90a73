import csv, sys, collections
path = sys.argv[1]
rows = list(csv.reader(open(path)))
hdr = rows[1]; data = rows[2:]
idx = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
tot = collections.Counter(); total = 0
for r in data:
    for h in reasons:
        v = int(r[idx[h]] or 0); tot[h] += v
    total += int(r[idx["Warp Stall Sampling (All Samples)"]] or 0)
print("total samples", total)
for h, v in tot.most_common(): 
    if v: print(f"  {h:28s} {v:8d} {100*v/total:5.1f}%")
print("top instructions")
data2 = sorted(enumerate(data), key=lambda x: -int(x[1][idx["Warp Stall Sampling (All Samples)"]] or 0))
for i, r in data2[:int(sys.argv[2]) if len(sys.argv) > 2 else 30]:
    s = int(r[idx["Warp Stall Sampling (All Samples)"]]); 
    top = sorted(((int(r[idx[h]] or 0), h[6:]) for h in reasons), reverse=True)[:2]
    print(f"{i:5d} {s:7d} {100*s/total:5.1f}% {r[1].strip()[:60]:60s} {top}")
