import sys, collections
import numpy as np
verbose = '-v' in sys.argv
for f in [a for a in sys.argv[1:] if a != '-v']:
    rows=[l.split() for l in open(f) if l.startswith('HACK ')]
    ctas=collections.defaultdict(list); t0s={}; sms={}
    for r in rows:
        _,c,sm,t0,i,seq,steps,slot,tend=r
        ctas[int(c)].append((int(i),int(seq),int(steps),int(slot),int(tend))); t0s[int(c)]=int(t0); sms[int(c)]=int(sm)
    T0=min(t0s.values())
    ends={c:(max(p[4] for p in v)-T0)/1000 for c,v in ctas.items()}
    e=np.array(list(ends.values()))
    st=np.array([(t0s[c]-T0)/1000 for c in ctas])
    by_parts=collections.defaultdict(list)
    for c,v in ctas.items(): by_parts[len(v)].append(ends[c])
    print(f"== {f.split('/')[-1]}: {len(ctas)} CTAs; start max {st.max():.1f}; end min {e.min():.1f} med {np.median(e):.1f} max {e.max():.1f} us; by parts: " +
          ', '.join(f"{k}: n={len(v)} mean {np.mean(v):.1f} max {np.max(v):.1f}" for k,v in sorted(by_parts.items())))
    if verbose:
        for c in sorted(ctas, key=lambda c: -ends[c])[:int(sys.argv.count('-v'))*12]:
            prev=t0s[c]; s=[]
            for p in sorted(ctas[c]):
                s.append(f"seq{p[1]}:{p[2]}st{'P' if p[3]>=0 else 'F'} {(p[4]-prev)/1000:.1f}us ({(p[4]-prev)/1000/max(p[2],1):.2f}/st)"); prev=p[4]
            print(' ', c, 'sm', sms[c], f"start {(t0s[c]-T0)/1000:.1f} end {ends[c]:.1f}", ' | '.join(s))
