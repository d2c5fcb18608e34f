#!/usr/bin/env python3
"""A model of an adaptive route without HTTP, to compare variants of the bandit (docs/routing.md §3a).

It replays scripts/adaptive_simulation.py's vendors, rates and degradation, 20 users a second, with
the gateway's buckets, half-life, settling and floor, and prints per variant over eight seeds the expected
conversions against the oracle's ("exp"), the realized ones ("ratio"), the best vendor's lowest share
after 1,000 users, the ID users the move took, and the lowest provider share. Vonage's refused early cancels
leave its failures pending until they settle. Variants: ramp (pending verifications lean to failure),
floor="needed" (the floor tops up only), nmin (the newest outcomes remembered in full), window.

    python3 scripts/adaptive_model.py base ramp+needed+nmin20
"""
import math, random, sys, collections
VENDORS=("twilio","sinch","vonage")
RATES={"twilio":{"GB":0.95,"ID":0.62,"DE":0.78},"sinch":{"GB":0.78,"ID":0.78,"DE":0.95},"vonage":{"GB":0.62,"ID":0.95,"DE":0.62}}
COUNTRIES=("GB","ID","DE")
def rate(v,c,deg): return 0.40 if deg and v=="vonage" and c=="ID" else RATES[v][c]
def best(c,deg):
    r={v:rate(v,c,deg) for v in VENDORS}; b=max(r,key=r.get); return b,r[b]

def run(seed, variant, users=3000, arr=20.0, window=15.0, settle=3.0, min_share=0.02, nmin=0, ramp=False, floor="uniform", vonage_lag=True, horizon=6):
    rng=random.Random(seed)
    bw=max(1,int(window/8))
    # cells[(country,vendor,bucket)] = [starts, approvals, failures, pend_list]
    cells=collections.defaultdict(lambda:[0,0,0]); bycv=collections.defaultdict(dict)
    pending=[]  # (resolve_time, key, approved)  for vonage undelivered: never resolved (settle via bucket)
    log=[]; exp_conv=[]
    for i in range(users):
        t=i/arr; c=COUNTRIES[i%3]; deg=i>=users//2
        # posteriors
        post={}; sshare={}
        for v in VENDORS:
            a=1.0;b=1.0; ws=0.0; obs=[]
            for bk,(s,ap,fa) in bycv[(c,v)].items():
                mid=bk+bw/2; age=max(0,t-mid)
                if bk < t - horizon*window: continue
                w=0.5**(age/window)
                settled = bk+bw+settle <= t
                if settled: f=s-ap; pend=0
                else:
                    f=fa; pend=max(0,s-ap-fa)
                    if ramp: f += pend*min(1.0,max(0.0,(t-mid))/settle)

                obs.append((bk,w,ap,f))
                ws+=w*s
            if nmin:
                obs.sort(key=lambda o:-o[0]); n=0.0
                for bk,w,ap,f in obs:
                    ww = 1.0 if n < nmin else w
                    n += ap+f
                    a+=ww*ap; b+=ww*f
            else:
                for bk,w,ap,f in obs: a+=w*ap; b+=w*f
            post[v]=(a,b); sshare[v]=ws
        samples={v:rng.betavariate(*post[v]) for v in VENDORS}
        ranked=sorted(VENDORS,key=lambda v:-samples[v]); chosen=ranked[0]
        if floor=="uniform":
            if rng.random()<min_share*3: chosen=rng.choice(VENDORS)
        elif floor=="needed":
            tot=sum(sshare.values())
            if tot>0:
                low=min(VENDORS,key=lambda v:sshare[v]/tot)
                if sshare[low]/tot<min_share: chosen=low
        delivered = rng.random()<rate(chosen,c,deg)
        bk=int(t)//bw*bw
        cell=cells[(c,chosen,bk)]; bycv[(c,chosen)][bk]=cell; cell[0]+=1
        if delivered: cell[1]+=1
        elif not (vonage_lag and chosen=="vonage"): cell[2]+=1
        log.append((i,c,chosen,delivered)); exp_conv.append(rate(chosen,c,deg))
    conv=sum(d for *_,d in log); half=users//2
    oracle=sum(best(c,i>=half)[1] for i,c,_,_ in log)
    res={"ratio":conv/oracle,"exp":sum(exp_conv)/oracle}
    sh=[]
    for c in COUNTRIES:
        w,_=best(c,False); end=half if c=="ID" else users
        win=[x for x in log[1000:end] if x[1]==c]; sh.append(sum(x[2]==w for x in win)/len(win))
    res["share"]=min(sh)
    after=[x for x in log[half:] if x[1]=="ID"]; moved=None
    for e in range(50,min(len(after),500)+1):
        if sum(x[2]=="sinch" for x in after[e-50:e])>=40: moved=e;break
    res["moved"]=moved
    mins=min(sum(x[2]==v for x in log if x[1]==c)/1000 for c in COUNTRIES for v in VENDORS)
    res["minshare"]=mins
    return res

if __name__=="__main__":
    import itertools
    variants={
     "base":dict(),
     "ramp":dict(ramp=True),
     "needed":dict(floor="needed"),
     "nmin10":dict(nmin=10),
     "nmin20":dict(nmin=20),
     "ramp+needed":dict(ramp=True,floor="needed"),
     "ramp+needed+nmin10":dict(ramp=True,floor="needed",nmin=10),
     "ramp+needed+nmin20":dict(ramp=True,floor="needed",nmin=20),
     "ramp+nmin20":dict(ramp=True,nmin=20),
     "ramp+needed+nmin40":dict(ramp=True,floor="needed",nmin=40),
     "ramp+needed+nmin20+w30":dict(ramp=True,floor="needed",nmin=20,window=30),
     "ramp+needed+w30":dict(ramp=True,floor="needed",window=30),
     "ramp+needed+nmin20+w10":dict(ramp=True,floor="needed",nmin=20,window=10),
     "ramp+needed+nmin30":dict(ramp=True,floor="needed",nmin=30),
    }
    sel=sys.argv[1:] or list(variants)
    for name in sel:
        rs=[run(s,name,**variants[name]) for s in range(8)]
        r=[x["ratio"] for x in rs]
        e=[x["exp"] for x in rs]
        print(f"{name:22s} exp mean {sum(e)/len(e):.4f} min {min(e):.4f} ratio mean {sum(r)/len(r):.3f} min {min(r):.3f} share min {min(x['share'] for x in rs):.3f} moved {[x['moved'] for x in rs]} minshare {min(x['minshare'] for x in rs):.3f}",flush=True)
