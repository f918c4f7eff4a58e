"""Re-derive every die of an exported Battleboard battle: python3 verify_dice.py battle.json (standard library only)."""
import hashlib, json, random, sys  # noqa: E401, I001

doc = json.load(open(sys.argv[1], encoding="utf-8"))
d = doc["dice"]
h = lambda text: hashlib.sha256(text.encode()).hexdigest()  # noqa: E731
for epoch in d["seeds"]:  # the seed committed at the start, and a new one after each end the GM took back
    if epoch["seed"] is None or h(epoch["seed"]) != epoch["commitment"]:
        sys.exit(f"FAIL: the seed from version {epoch['version']} is missing or does not match its commitment")
checked = 0
for entry in d["draws"]:
    step = entry.get("step", entry["version"])  # the step whose dice they are (a step undone and made again rolls them again)
    seed = [e["seed"] for e in d["seeds"] if e.get("step", e["version"]) <= step][-1]  # each seed from its first step
    mix = ""
    for c in d["client_seeds"]:  # every client seed received before this version, in order
        if c["version"] < entry["version"]:
            mix = h(f"{mix}|{c['seat']}|{c['client_seed']}")
    base = h(f"{seed}/{mix}/{step}" if mix else f"{seed}/{step}")[:32]
    streams = {}
    for draw in entry["draws"]:
        if draw["stream"] not in streams:
            s = base
            for label in draw["path"]:
                s = h(f"{s}/{label}")[:32]
            streams[draw["stream"]] = random.Random(int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "big"))
        r, low, high = streams[draw["stream"]], draw["low"], draw["high"]
        if "faces" in draw:
            got, want = [r.randint(low, high) for _ in draw["faces"]], draw["faces"]
        else:
            n, size = high - low + 1, draw["size"]
            b = 32 if n <= 2**32 else 64
            bits = r.getrandbits(b * size) if size else 0
            values = [low + ((bits >> (b * i) & (2**b - 1)) * n >> b) for i in range(size)]
            got, want = hashlib.sha256(b"".join(v.to_bytes(8, "little", signed=True) for v in values)).hexdigest(), draw["sha256"]
        if got != want:
            sys.exit(f"FAIL at version {entry['version']}: the seed gives {got}, the file says {want}")
        checked += len(want) if "faces" in draw else draw["size"]
print(f"OK: {len(d['seeds'])} commitment(s) match their seeds; {checked} dice of {len(d['draws'])} commands re-derived")
