"""Plans and applies ring changes with Swift's own RingBuilder (never a re-implementation).

Run by @cairn/rings with the ring host's Python (the one that has Swift). It reads one JSON request
on stdin and prints one JSON answer on stdout:

  {"mode": "inspect", "builder": ..., "ring_file": ...}
  {"mode": "plan", "builder": ..., "ring_file": ..., "seed": N, "add": [...], "set_weight": [...],
   "remove": [...], "max_move_pct": 5}
  {"mode": "apply", "builder": ..., "ring_file": ..., "seed": N, "step": {...}, "expect": {...}}

Every rebalance works on a copy of the loaded builder; only "apply" writes, and only when Swift's
result is the one the plan recorded. Input the builder refuses is answered with
{"error": sentence} and exit status 5, the CLI's "input refused".
"""

import copy
import gc
import hashlib
import json
import math
import multiprocessing
import os
import random
import shutil
import sys
import time
import traceback

REFUSED = 5


class Refused(Exception):
    pass


try:
    import swift
    from swift.common import exceptions as swift_exceptions
    from swift.common.ring import RingBuilder, RingData
    from swift.common.ring.utils import parse_add_value, parse_search_value
except ImportError:
    print(json.dumps({"error": "no_swift"}))
    sys.exit(REFUSED)

NONE_DEV = 2 ** 16 - 1


def md5_of(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_builder(path):
    try:
        return RingBuilder.load(path)
    except swift_exceptions.FileNotFoundError:
        raise Refused("The builder file %s does not exist." % path)
    except swift_exceptions.PermissionError:
        raise Refused("The builder file %s cannot be read (permission denied)." % path)
    except swift_exceptions.UnPicklingError:
        raise Refused("%s is not a Swift ring builder file." % path)
    except Exception as e:  # what swift-ring-builder says for anything else it cannot load
        raise Refused("Problem occurred while reading builder file %s: %s" % (path, e))


def check_ring_file(builder, builder_path, ring_path):
    """The installed ring must be the one this builder writes, as swift-ring-builder's default
    command decides "up-to-date" versus "obsolete"; a plan made from a builder that is not what
    the cluster runs would describe moves that are not the real ones."""
    if not builder.ever_rebalanced:
        return None
    if not os.path.exists(ring_path):
        raise Refused(
            "The ring file %s does not exist, but %s has been rebalanced; write it with "
            "'swift-ring-builder %s write_ring' or restore it first." % (ring_path, builder_path, builder_path))
    try:
        ring_dict = RingData.load(ring_path).to_dict()
    except Exception as e:
        raise Refused("The ring file %s is not a valid ring (%s)." % (ring_path, e))
    if builder.get_ring().to_dict() != ring_dict:
        raise Refused(
            "The ring file %s does not match %s (swift-ring-builder calls it obsolete): its devices or "
            "partition assignments differ. Find out which one the cluster runs before planning." % (ring_path, builder_path))
    return md5_of(ring_path)


def split_value(text, what):
    """'<value>:<number>': the number after the last colon (a device string has colons of its own)."""
    head, sep, tail = text.rpartition(":")
    if not sep or not head:
        raise Refused("%s %r must look like <device>:<weight>." % (what, text))
    try:
        weight = float(tail)
    except ValueError:
        raise Refused("%s %r: the weight %r is not a number." % (what, text, tail))
    if not math.isfinite(weight) or weight < 0:
        raise Refused("%s %r: a weight must be 0 or more." % (what, text))
    return head, weight


def search(builder, value, what):
    try:
        devs = builder.search_devs(parse_search_value(value))
    except ValueError as e:
        raise Refused("%s %r is not a device search value swift-ring-builder understands (%s)." % (what, value, e))
    if not devs:
        raise Refused("%s %r: no device in the builder matches it." % (what, value))
    return devs


def next_dev_id(builder, taken):
    """add_dev's own choice (the first free slot), skipping ids this plan has already given out."""
    i = 0
    while (i < len(builder.devs) and builder.devs[i] is not None) or i in taken:
        i += 1
    return i


def parse_changes(builder, req):
    """The requested end state: new devices (with the ids add_dev would give them), target weights
    and devices to remove."""
    adds, targets, removes = [], {}, set()
    taken = set()
    for text in req.get("add", []):
        devstr, weight = split_value(text, "--add")
        try:
            dev = parse_add_value(devstr)
        except ValueError as e:
            raise Refused("--add %r: %s" % (text, e))
        for other in [d for d in builder.devs if d] + adds:
            if (other["ip"], other["port"], other["device"]) == (dev["ip"], dev["port"], dev["device"]):
                raise Refused("--add %r: device %d already uses %s:%d/%s." % (
                    text, other["id"], dev["ip"], dev["port"], dev["device"]))
        if dev["replication_ip"] is None:
            dev["replication_ip"] = dev["ip"]
        if dev["replication_port"] is None:
            dev["replication_port"] = dev["port"]
        dev["id"] = next_dev_id(builder, taken)
        taken.add(dev["id"])
        dev["weight"] = weight
        adds.append(dev)
        targets[dev["id"]] = weight
    for text in req.get("set_weight", []):
        value, weight = split_value(text, "--set-weight")
        for dev in search(builder, value, "--set-weight"):
            targets[dev["id"]] = weight
    for value in req.get("remove", []):
        for dev in search(builder, value, "--remove"):
            removes.add(dev["id"])
            targets[dev["id"]] = 0.0
    return adds, targets, removes


def apply_ops(builder, step):
    """One step's changes, applied to a builder exactly as apply will apply them to the real one."""
    for dev in step["add"]:
        builder.add_dev(dict(dev))
    for dev_id, weight in step["weights"]:
        if builder.devs[dev_id]["weight"] != weight:
            builder.set_dev_weight(dev_id, weight)
    for dev_id in step["remove"]:
        builder.remove_dev(dev_id)


def rebalance(builder, seed):
    """Swift's rebalance with the plan's seed, given as swift-ring-builder's --seed passes it (a string)."""
    before = copy.deepcopy(builder._replica2part2dev) if builder.ever_rebalanced else None
    before_parts = {d["id"]: d["parts"] for d in builder._iter_devs()}
    try:
        parts_moved, balance, _removed = builder.rebalance(seed=str(seed))
    except swift_exceptions.RingBuilderError as e:
        raise Refused("Swift's ring builder refused the change: %s" % e)
    moved_out, moved_in, replicas_moved = {}, {}, 0
    if before is not None:
        for old, new in zip(before, builder._replica2part2dev):
            for o, n in zip(old, new):
                if o != n:
                    replicas_moved += 1
                    if o != NONE_DEV:
                        moved_out[o] = moved_out.get(o, 0) + 1
                    moved_in[n] = moved_in.get(n, 0) + 1
    try:
        required_overload = builder.get_required_overload()
    except swift_exceptions.RingValidationError:
        required_overload = None
    return {
        "parts_moved": parts_moved,
        "replicas_moved": replicas_moved,
        "balance": balance,
        "dispersion": builder.dispersion,
        "required_overload": required_overload,
        "parts_before": before_parts,
        "parts_after": {d["id"]: d["parts"] for d in builder._iter_devs()},
        "moved_out": moved_out,
        "moved_in": moved_in,
    }


def device_rows(base, after, result):
    rows = []
    for dev in base.devs + [d for d in after.devs if d and (d["id"] >= len(base.devs) or base.devs[d["id"]] is None)]:
        if dev is None:
            continue
        new = after.devs[dev["id"]] if dev["id"] < len(after.devs) else None
        existed = dev["id"] < len(base.devs) and base.devs[dev["id"]] is not None
        rows.append({
            "id": dev["id"], "region": dev["region"], "zone": dev["zone"], "ip": dev["ip"], "port": dev["port"],
            "device": dev["device"],
            "weight": dev["weight"] if existed else 0.0,
            "weight_after": new["weight"] if new else 0.0,
            "parts": dev["parts"] if existed else 0,
            "parts_after": new["parts"] if new else 0,
            "removed": new is None,
            "added": not existed,
            "moved_out": result["moved_out"].get(dev["id"], 0),
            "moved_in": result["moved_in"].get(dev["id"], 0),
        })
    return rows


def summary(builder, result):
    return {k: result[k] for k in ("parts_moved", "replicas_moved", "balance", "dispersion", "required_overload")} | {
        "parts_moved_pct": 100.0 * result["parts_moved"] / builder.parts,
        "parts_after": {str(k): v for k, v in result["parts_after"].items()},
    }


def weights_at(start, targets, fraction):
    """Each changed device's weight a fraction of the way from where it starts to its target."""
    if fraction >= 1:
        return dict(targets)
    return {i: round(start.get(i, 0.0) + (t - start.get(i, 0.0)) * fraction, 2) for i, t in targets.items()}


# The smallest share of the change a step may take; a step still too big at this size is kept.
MIN_DELTA = 1.0 / 1024
# Swift's rebalance moves more partitions than the weights strictly require (it also gathers parts
# for balance and dispersion): about 1.8 times as many when a node is added to the benchmark's ring.
# The first step is sized from the weights with this factor, so that it can be computed alongside
# the whole change instead of after it; a step that still moves too much is halved.
SWIFT_MOVE_FACTOR = 2.0


def change_of(base, adds, targets, removes):
    """The change as the plan records it (JSON: lists of [id, weight]), for apply to step on from."""
    return {
        "start": sorted((i, base.devs[i]["weight"]) for i in targets if i < len(base.devs) and base.devs[i]),
        "targets": sorted(targets.items()),
        "add": [dict(d, weight=targets[d["id"]]) for d in adds],
        "remove": sorted(removes),
    }


def step_ops(change, fraction, added):
    """The changes of the step that takes every weight `fraction` of the way to its target. Devices
    the plan adds are added by the first step (at that fraction of their weight) and stepped like the
    others after it; devices to remove go in the last step."""
    start, targets = dict(change["start"]), dict(change["targets"])
    weights = weights_at(start, targets, fraction)
    return {
        "add": [] if added else [dict(d, weight=weights[d["id"]]) for d in change["add"]],
        "weights": sorted((i, w) for i, w in weights.items() if i in start or added),
        "remove": list(change["remove"]) if fraction >= 1.0 else [],
    }


def estimated_share(base, change):
    """Percent of the partitions the whole change is expected to move, from the weights alone: the
    replicas whose device's share of the weight grows, times SWIFT_MOVE_FACTOR. Only sizes the first
    step; every figure shown is Swift's."""
    before = {d["id"]: d["weight"] for d in base.devs if d}
    after = {**before, **dict(change["targets"])}
    total_before, total_after = sum(before.values()), sum(after.values())
    if total_before <= 0 or total_after <= 0:
        return 100.0
    grown = sum(max(0.0, w / total_after - before.get(i, 0.0) / total_before) for i, w in after.items())
    return 100.0 * base.replicas * grown * SWIFT_MOVE_FACTOR


def compute_step(state, change, done, delta, seed, max_pct):
    """The step after the one that reached `done`, by Swift on a copy of `state` with min_part_hours
    treated as passed: weights `delta` further toward their targets, halved while Swift moves more
    than max_pct of the partitions."""
    while True:
        to = min(1.0, done + delta)
        ops = step_ops(change, to, done > 0)
        trial = copy.deepcopy(state)
        trial.pretend_min_part_hours_passed()
        apply_ops(trial, ops)
        result = rebalance(trial, seed)
        if 100.0 * result["parts_moved"] / trial.parts > max_pct and delta > MIN_DELTA:
            delta /= 2
            continue
        return dict(summary(trial, result), fraction=to, **ops)


def next_delta(previous_fraction, step, max_pct):
    """The next step's size: the last one's, scaled by how far below the limit it stayed."""
    delta = step["fraction"] - previous_fraction
    return delta * min(2.0, max(0.5, 0.9 * max_pct / max(step["parts_moved_pct"], 0.01)))


def whole_change(base, change, seed):
    """Swift's answer for the whole change in one rebalance: the plan's top-level figures and rows."""
    after = copy.deepcopy(base)
    # The plan shows what the change does once the wait is over, as if min_part_hours had passed.
    after.pretend_min_part_hours_passed()
    # The whole change is the last step's changes with nothing added before it.
    apply_ops(after, step_ops(change, 1.0, False))
    result = rebalance(after, seed)
    return summary(after, result), device_rows(base, after, result)


def do_inspect(req):
    builder = load_builder(req["builder"])
    ring_md5 = check_ring_file(builder, req["builder"], req["ring_file"])
    nodes = sorted({(d["ip"], d["port"]) for d in builder._iter_devs()})
    return {
        "swift_version": swift.__version__,
        "builder_md5": md5_of(req["builder"]),
        "ring_md5": ring_md5,
        "min_part_hours": builder.min_part_hours,
        "min_part_seconds_left": builder.min_part_seconds_left,
        "nodes": [{"ip": ip, "port": port} for ip, port in nodes],
    }


def in_child(fn, *args):
    """Runs fn(*args) in a forked process (on the other core) and returns a function that waits for
    its answer. The fork shares the loaded builder without copying or pickling it; only the answer,
    a few small dicts, comes back through the pipe. A refusal there is a refusal here."""
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    # Daemonic: a refusal here ends the program without waiting for the child's rebalance.
    child = context.Process(target=_child_main, args=(writer, fn, args), daemon=True)
    child.start()
    writer.close()

    def wait():
        try:
            kind, value = reader.recv()
        except EOFError:
            kind, value = "error", "the process computing the whole change ended without an answer"
        child.join()
        if kind == "refused":
            raise Refused(value)
        if kind == "error":
            raise RuntimeError(value)
        return value
    return wait


def _child_main(writer, fn, args):
    try:
        writer.send(("ok", fn(*args)))
    except Refused as e:
        writer.send(("refused", str(e)))
    except BaseException:
        writer.send(("error", traceback.format_exc()))
    finally:
        writer.close()


def do_plan(req):
    """The whole change in one rebalance (the top-level figures and device rows) and the first step,
    both by Swift. Each later step is computed by apply right after the step before it is written,
    so every step is in the plan file, with Swift's figures, before it is applied."""
    base = load_builder(req["builder"])
    ring_md5 = check_ring_file(base, req["builder"], req["ring_file"])
    if not base.ever_rebalanced:
        raise Refused("%s has never been rebalanced; build the first ring with swift-ring-builder." % req["builder"])
    adds, targets, removes = parse_changes(base, req)
    seed = req["seed"] if req.get("seed") is not None else random.randint(0, 2 ** 31 - 1)
    max_pct = float(req["max_move_pct"])
    change = change_of(base, adds, targets, removes)
    estimate = estimated_share(base, change)
    step = None
    if estimate <= max_pct:
        whole, devices = whole_change(base, change, seed)
    else:
        # Expected to take several steps: the whole change and a first step sized from the weights
        # do not depend on each other, so Swift computes them side by side, one on each core.
        wait_whole = in_child(whole_change, base, change, seed)
        step = compute_step(base, change, 0.0, max(0.9 * max_pct / estimate, MIN_DELTA), seed, max_pct)
        whole, devices = wait_whole()
    if whole["parts_moved_pct"] <= max_pct:
        # A change that fits in one step is that step: Swift's one answer.
        step = dict(whole, fraction=1.0, **step_ops(change, 1.0, False))
    elif step is None:
        step = compute_step(base, change, 0.0, max(0.9 * max_pct / whole["parts_moved_pct"], MIN_DELTA),
                            seed, max_pct)
    step["step"] = 1
    return {
        "swift_version": swift.__version__,
        "builder_md5": md5_of(req["builder"]),
        "ring_md5": ring_md5,
        "seed": seed,
        "part_power": base.part_power,
        "replicas": base.replicas,
        "parts_total": base.parts,
        "min_part_hours": base.min_part_hours,
        "min_part_seconds_left": base.min_part_seconds_left,
        "overload": base.overload,
        "balance_before": base.get_balance(),
        "dispersion_before": base.dispersion,
        **whole,
        "devices": devices,
        "change": change,
        # If every step took as large a share of the change as the first: an estimate.
        "steps_estimated": math.ceil(1.0 / step["fraction"] - 1e-9),
        "steps": [step],
    }


def fsync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def do_apply(req):
    """Carries out one step on the real builder, writing only when Swift's result is the planned one."""
    path, ring_path = req["builder"], req["ring_file"]
    builder = load_builder(path)
    check_ring_file(builder, path, ring_path)
    if builder.min_part_seconds_left > 0:
        raise Refused("min_part_hours has not passed: %d seconds left." % builder.min_part_seconds_left)
    step = req["step"]
    apply_ops(builder, {"add": step["add"], "weights": [tuple(w) for w in step["weights"]], "remove": step["remove"]})
    result = rebalance(builder, req["seed"])
    got = summary(builder, result)
    expect = req["expect"]
    if got["parts_moved"] != expect["parts_moved"] or got["parts_after"] != expect["parts_after"]:
        raise Refused(
            "Swift's rebalance of this step moved %d partitions where the plan says %d, or left devices with other "
            "partition counts; nothing was written. Re-plan." % (got["parts_moved"], expect["parts_moved"]))
    try:
        builder.validate()
    except swift_exceptions.RingValidationError as e:
        raise Refused("Swift's ring builder found the stepped ring invalid (%s); nothing was written." % e)
    directory = os.path.dirname(os.path.abspath(path))
    backups = os.path.join(directory, "backups")
    os.makedirs(backups, exist_ok=True)
    ts = "%d." % time.time()
    # The builder and ring being replaced, kept as swift-ring-builder keeps versions: backups/<ts>.<name>.
    for current in (path, ring_path):
        if os.path.exists(current):
            kept = os.path.join(backups, ts + os.path.basename(current))
            shutil.copy2(current, kept)
            fsync_file(kept)
    tmp_builder, tmp_ring = path + ".cairn-tmp", ring_path + ".cairn-tmp"
    builder.save(tmp_builder)
    builder.get_ring().save(tmp_ring)
    for tmp in (tmp_builder, tmp_ring):
        fsync_file(tmp)
    # The ring first: a crash between the two renames leaves a ring the old builder calls obsolete,
    # which plan and apply refuse, rather than a new builder beside an old ring that looks current.
    os.replace(tmp_ring, ring_path)
    os.replace(tmp_builder, path)
    fsync_file(directory)
    answer = dict(got, builder_md5=md5_of(path), ring_md5=md5_of(ring_path), backups=backups)
    following = req.get("next")
    if following and step["fraction"] < 1.0:
        # The next step, computed now from the builder just written, so that the plan file shows it
        # before it is applied; apply then checks Swift gives exactly it.
        max_pct = float(following["max_move_pct"])
        delta = next_delta(following["previous_fraction"],
                           {"fraction": step["fraction"], "parts_moved_pct": got["parts_moved_pct"]}, max_pct)
        try:
            answer["next_step"] = compute_step(builder, following["change"], step["fraction"], delta, req["seed"],
                                               max_pct)
        except Refused as e:
            answer["next_step_refused"] = str(e)
    return answer


def main():
    # Swift's rebalance allocates millions of small objects; the cyclic garbage collector's passes
    # over them take a sixth to a third of its CPU time at 2^18 partitions (bench:rings's ring).
    # This process lives for one request and its memory goes by reference counting and at exit, so
    # the collector only costs time. Swift's results do not change (the tests compare them with
    # swift-ring-builder's).
    gc.disable()
    req = json.load(sys.stdin)
    try:
        answer = {"inspect": do_inspect, "plan": do_plan, "apply": do_apply}[req["mode"]](req)
    except Refused as e:
        print(json.dumps({"error": str(e)}))
        sys.exit(REFUSED)
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
