"""Eclipse Phase's attack: modifiers, the declared attack, the defence, both d100, pools after the roll, damage.

Dice order of one attack: the attacker's d100, then the defender's d100 (none if it cannot defend); after
both sides accept, the blind-attack d100 if that option was taken, then the weapon's damage dice, the extra
dice (charge, then burst, full automatic or aggressive), the superior-success d6s, and last the SOM check's
d100 if a wound was dealt. A disarming called shot that comes off rolls no damage and nothing after it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ... import contract, read
from ...core import GM_ONLY, Event, State, Viewer, combatant_visibility, event, told
from ...dice import DiceSource
from ...errors import IllegalDeclaration, InvalidDeclaration
from ...physical import rolled_by
from .board import adjacent, is_able, metres_between
from .called_shots import CalledShots, called_aim_of, called_words
from .data import (
    AGGRESSIVE_DEFENCE_PENALTY,
    AIM_MODES,
    BODY_WEAPONS,
    CALLED_SHOT,
    CHARGE_DICE,
    CHARGE_MODIFIER,
    DEFENDS,
    FULL_DEFENCE_BONUS,
    FULL_MOVE_MODIFIER,
    MODE_BONUS,
    MODES,
    ONE_HANDED,
    POOL_BONUS,
    POOL_LABELS,
    POOLS,
    SIZES,
    SKILLS,
    SUPERIOR_POSITION,
    VISIBILITY,
    WOUND_PENALTY,
)
from .rulings import (
    armour_after_piercing,
    breakdown,
    contest,
    count_of,
    flip,
    halve,
    is_double,
    judge,
    parse_dv,
    range_band,
    result_words,
    signed,
    target_number,
    without_target,
    wounds_from,
)


class Combat(CalledShots):
    """Attacks and defences, from the declaration to the SOM check."""

    # --- modifiers -----------------------------------------------------------------------------
    def _condition_mods(self, c: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
        mods = []
        hurt = c["wounds"] + c["traumas"]
        if hurt:
            label = ", ".join(count_of(n, w) for n, w in ((c["wounds"], "wound"), (c["traumas"], "trauma")) if n)
            mods.append({"label": label, "value": -WOUND_PENALTY * hurt})
        for m in c["modifiers"]:
            if m["applies"] in (kind, "all"):
                mods.append({"label": m["label"], "value": m["value"], "gm": True})
        return mods

    def attack_modifiers(
        self, state: State, attacker_id: str, target_id: str, weapon: Mapping[str, Any], choices: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The attacker's modifiers and extra damage dice for one attack (without the pool bonus)."""
        a, t = state["combatants"][attacker_id], state["combatants"][target_id]
        mods: list[dict[str, Any]] = []
        extra: list[dict[str, Any]] = []
        melee = weapon["skill"] == "melee"
        if not melee:
            band = range_band(metres_between(state, a, t), weapon["range"])
            mods.append({"label": f"range: {band['band']}", "value": band["modifier"]})
        full_move = self._full_move_made(state, a)
        if melee and choices.get("charge"):
            mods.append({"label": "charging", "value": CHARGE_MODIFIER})
            extra.append({"label": "charge", "dice": list(CHARGE_DICE)})
        elif full_move:
            mods.append({"label": "full move", "value": FULL_MOVE_MODIFIER})
        style = "aggressive" if melee and choices.get("aggressive") else choices.get("mode", "single")
        if style in MODE_BONUS:
            accuracy, dice = MODE_BONUS[style]
            name = "aggressive melee" if style == "aggressive" else MODES[style]
            if choices.get("bonus") == "accuracy":
                mods.append({"label": name, "value": accuracy})
            else:
                extra.append({"label": name, "dice": list(dice)})
        if choices.get("superior_position"):
            mods.append({"label": "superior position", "value": SUPERIOR_POSITION})
        if choices.get("called_shot"):
            mods.append({"label": "called shot", "value": CALLED_SHOT})
        if choices.get("one_handed") and weapon.get("two_handed"):
            mods.append({"label": "two-handed weapon in one hand", "value": ONE_HANDED})
        label, size_mod = SIZES[t["size"]]
        if size_mod:
            mods.append({"label": f"target {label}", "value": size_mod})
        vis = choices.get("visibility", "clear")
        if VISIBILITY[vis][1]:
            mods.append({"label": VISIBILITY[vis][0], "value": VISIBILITY[vis][1]})
        if self._aim_counts(a, target_id, weapon, choices.get("mode", "single")):
            mods.append({"label": "aimed", "value": a["aim"]["bonus"]})
        mods.extend(self._condition_mods(a, "attack"))
        return mods, extra

    def _aim_counts(self, c: Mapping[str, Any], target_id: str, weapon: Mapping[str, Any], mode: str) -> bool:
        """An aim helps a ranged attack on its target fired as single shots only (ruling 10)."""
        return weapon["skill"] != "melee" and mode in AIM_MODES and self._aim_ready(c, target_id)

    def defence_options(self, state: State, pending: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The defences the defender may choose, each with its target number."""
        d = state["combatants"][pending["defender"]]
        mods = self._condition_mods(d, "defence")
        if d["full_defence"]:
            mods.insert(0, {"label": "full defence", "value": FULL_DEFENCE_BONUS})
        # an aggressive attack of its own lowers only its Fray tests until its next action (ruling 10)
        fray_mods = ([{"label": "own aggressive attack", "value": AGGRESSIVE_DEFENCE_PENALTY}] + mods
                     if d["aggressive"] else mods)
        if pending["skill"] == "melee":
            options = [("melee", f"Block or parry with Melee {d['melee']}", d["melee"], "Melee", mods),
                       ("fray", f"Dodge with Fray {d['fray']}", d["fray"], "Fray", fray_mods)]
        else:
            options = [("fray", f"Dodge with half Fray ({d['fray']} ÷ 2 = {halve(d['fray'])})", halve(d["fray"]),
                        "half Fray", fray_mods)]
        return [{"method": m, "label": label, "skill": skill, "skill_label": sl, "mods": list(ms),
                 "target": target_number(skill, ms)} for m, label, skill, sl, ms in options]

    # --- the attack and the defence ---------------------------------------------------------
    def _weapon(self, c: Mapping[str, Any], d: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        index = read.whole(d, "weapon")
        if not 0 <= index < len(c["weapons"]):
            raise InvalidDeclaration(f"weapon must be 0 to {len(c['weapons']) - 1} for {c['name']}")
        if c["weapons"][index].get("dropped_at"):
            raise IllegalDeclaration(f"{c['name']}'s {c['weapons'][index]['name']} lies on the ground: pick it up "
                                     "first, or fight with something else")
        return index, c["weapons"][index]

    def _pool_choice(self, c: Mapping[str, Any], d: Mapping[str, Any]) -> str | None:
        pool = self._choice(d, "pool", ("none",) + POOLS, "none")
        if pool == "none":
            return None
        if c["pools"][pool] < 1:
            raise IllegalDeclaration(f"{c['name']} has no {POOL_LABELS[pool]} left")
        return pool

    @contract.declaration("attack")
    def _do_attack(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        a = self._combatant(state, d)
        self._require_active(state, a)
        if not is_able(a):
            raise IllegalDeclaration(f"{a['name']} cannot act")
        if state["turn"]["complex_used"]:
            raise IllegalDeclaration(f"{a['name']} has already used its complex action this turn")
        t = self._combatant(state, d, "target")
        if t["id"] == a["id"]:
            raise IllegalDeclaration("a combatant cannot attack itself")
        if t["state"] == "dead":
            raise IllegalDeclaration(f"{t['name']} is already dead")
        index, weapon = self._weapon(a, d)
        melee = weapon["skill"] == "melee"
        mode = self._choice(d, "mode", MODES, "single")
        if mode not in weapon["modes"]:
            raise IllegalDeclaration(f"the {weapon['name']} cannot fire {MODES[mode]}")
        choices = {
            "mode": mode,
            "bonus": self._choice(d, "bonus", ("damage", "accuracy"), "damage"),
            "charge": self._flag(d, "charge"),
            "aggressive": self._flag(d, "aggressive"),
            "superior_position": self._flag(d, "superior_position"),
            "called_shot": self._called_aim(d),
            "one_handed": self._flag(d, "one_handed"),
            "visibility": self._choice(d, "visibility", VISIBILITY, "clear"),
        }
        if melee and not adjacent(a, t, state):
            raise IllegalDeclaration(f"{t['name']} is out of reach of a melee attack (move next to it first)")
        if (choices["charge"] or choices["aggressive"]) and not melee:
            raise IllegalDeclaration("charging and aggressive attacks are melee attacks")
        if choices["charge"] and not self._full_move_made(state, a):
            raise IllegalDeclaration(
                f"{a['name']} cannot charge: a charge needs a full move first, more than its base move of "
                f"{a['base_move']:g} m (it has moved {state['turn']['moved']:g} m this turn)")
        if mode not in AIM_MODES and not melee and self._aim_ready(a, t["id"]):
            raise IllegalDeclaration(
                f"{a['name']} has aimed at {t['name']}, and an aim works only with single shots: fire single "
                f"shots at {t['name']}, or fire {MODES[mode]} at someone else")
        if choices["one_handed"] and not weapon["two_handed"]:
            raise IllegalDeclaration(f"the {weapon['name']} is already a one-handed weapon")
        if choices["called_shot"] == "spot":
            choices["called_spot"] = self._called_spot(d)
        if choices["called_shot"] == "disarm" and self.held_weapon(t) is None:
            raise IllegalDeclaration(f"{t['name']} holds no weapon that a called shot could knock away")
        pool = self._pool_choice(a, d)
        mods, extra = self.attack_modifiers(state, a["id"], t["id"], weapon, choices)
        skill = a[weapon["skill"]]
        pool_bonus = POOL_BONUS if pool else 0
        target = target_number(skill, mods, pool_bonus)
        state["turn"]["complex_used"] = True
        state["turn"]["acted"] = True
        if weapon["id"] not in BODY_WEAPONS:
            a["held"] = index
        pending = {
            "attacker": a["id"], "defender": t["id"], "weapon_index": index, "weapon": copy.deepcopy(weapon),
            "skill": weapon["skill"], "skill_value": skill, "choices": choices, "mods": mods, "extra": extra,
            "pool": pool, "target": target, "metres": metres_between(state, a, t),
            "phase": "defence", "defence": None, "rolls": None, "post": {},
        }
        state["pending"] = pending
        if choices["aggressive"]:
            a["aggressive"] = True
        attack = (f"{a['name']} attacks {t['name']} with the {weapon['name']}{'' if mode == 'single' else ' (' + MODES[mode] + ')'}"
                  f"{', a called shot ' + called_words(choices) if choices['called_shot'] else ''}")
        text = f"{attack}: target number {target} ({breakdown(SKILLS[weapon['skill']], skill, mods, pool_bonus)})."
        events.append(event("attack.declared", text, visibility=combatant_visibility(a["id"]),
                            others=told(f"{attack}.", attacker=a["id"], defender=t["id"]),
                            attacker=a["id"], defender=t["id"], target=target))
        if not self.can_defend(t):
            why = t["state"] if t["state"] != "ok" else next(
                c for c in ("unconscious", "surprised") if c in t["conditions"])
            events.append(event("defence.skipped", f"{t['name']} cannot defend ({why}).", combatant=t["id"]))
            self._roll_exchange(state, dice, events)

    @contract.declaration("cancel_attack")
    def _do_cancel_attack(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                          events: list[Event]) -> None:
        a = self._combatant(state, d)
        p = state["pending"]
        if p is None or p["attacker"] != a["id"] or p["phase"] != "defence":
            raise IllegalDeclaration("there is no attack of this combatant waiting for a defence")
        state["pending"] = None
        state["turn"]["complex_used"] = False
        a["aggressive"] = False
        events.append(event("attack.withdrawn", f"{a['name']} thinks better of the attack.", combatant=a["id"]))

    @contract.declaration("defend")
    def _do_defend(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        c = self._combatant(state, d)
        p = state["pending"]
        if p is None or p["phase"] != "defence" or p["defender"] != c["id"]:
            raise IllegalDeclaration(f"{c['name']} has no attack to defend against now")
        options = {o["method"]: o for o in self.defence_options(state, p)}
        method = self._choice(d, "method", tuple(options), next(iter(options)))
        chosen = options[method]
        mods = list(chosen["mods"])
        if self._flag(d, "superior_position"):
            mods.append({"label": "superior position", "value": SUPERIOR_POSITION})
        pool = self._pool_choice(c, d)
        pool_bonus = POOL_BONUS if pool else 0
        target = target_number(chosen["skill"], mods, pool_bonus)
        p["defence"] = {"method": method, "skill_label": chosen["skill_label"], "skill_value": chosen["skill"],
                        "mods": mods, "pool": pool, "target": target}
        events.append(event("defence.declared", f"{c['name']} defends: target number {target} "
                            f"({breakdown(chosen['skill_label'], chosen['skill'], mods, pool_bonus)}).",
                            visibility=combatant_visibility(c["id"]),
                            others=told(f"{c['name']} {DEFENDS[method]}.", combatant=c["id"], method=method),
                            combatant=c["id"], target=target))
        self._roll_exchange(state, dice, events)

    def _consume_modifiers(self, c: dict[str, Any], kind: str) -> None:
        c["modifiers"] = [m for m in c["modifiers"] if m["lasting"] or m["applies"] not in (kind, "all")]

    def _roll_exchange(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        p = state["pending"]
        a, t = state["combatants"][p["attacker"]], state["combatants"][p["defender"]]
        if p["pool"]:
            a["pools"][p["pool"]] -= 1
        self._consume_modifiers(a, "attack")
        aim = a.get("aim")
        if p["skill"] != "melee" and aim and aim["target"] == t["id"] and aim.get("ready", True):
            a["aim"] = None
        rolls = [rolled_by(dice, a["id"]).randint(0, 99, f"{a['name']} attack ({SKILLS[p['skill']]})")]
        p["rolls"] = {"attacker": judge(rolls[0].total, p["target"]), "defender": None}
        p["post"] = {"attacker": {"used": bool(p["pool"]), "accepted": False}}
        if p["defence"] is not None:
            dfn = p["defence"]
            if dfn["pool"]:
                t["pools"][dfn["pool"]] -= 1
            self._consume_modifiers(t, "defence")
            rolls.append(rolled_by(dice, t["id"]).randint(0, 99, f"{t['name']} defence ({dfn['skill_label']})"))
            p["rolls"]["defender"] = judge(rolls[1].total, dfn["target"])
            p["post"]["defender"] = {"used": bool(dfn["pool"]), "accepted": False}
        p["phase"] = "reaction"
        ar, dr = p["rolls"]["attacker"], p["rolls"]["defender"]
        text = f"{a['name']} rolls {ar['roll']:02d} against {ar['target']}: {ar['label']}."
        words = f"{a['name']} rolls {ar['roll']:02d}: {ar['label']}."
        if dr is not None:
            text += f" {t['name']} rolls {dr['roll']:02d} against {dr['target']}: {dr['label']}."
            words += f" {t['name']} rolls {dr['roll']:02d}: {dr['label']}."
        result = contest(ar, dr)
        standing = f" As it stands: {'a hit' if result == 'hit' else 'a miss'}."
        # both sides' target numbers: the whole line for the GM, the dice and what they mean for everyone
        events.append(event("attack.rolled", text + standing, rolls=rolls, visibility=GM_ONLY,
                            others=told(words + standing, rolls=rolls, attacker=a["id"], defender=t["id"],
                                        attack=without_target(ar), defence=without_target(dr), standing=result),
                            attacker=a["id"], defender=t["id"], attack=ar, defence=dr, standing=result))
        self._settle_reactions(state, dice, events)

    # --- pools after the roll ---------------------------------------------------------------
    def reaction_choices(self, state: State, side: str) -> list[dict[str, Any]]:
        """What one side of the pending exchange may still spend after the roll."""
        p = state["pending"]
        if p is None or p["phase"] != "reaction" or side not in p["post"]:
            return []
        post = p["post"][side]
        if post["used"] or post["accepted"]:
            return []
        c = state["combatants"][p["attacker" if side == "attacker" else "defender"]]
        result = p["rolls"][side]
        choices = []
        for pool in POOLS:
            if c["pools"][pool] < 1:
                continue
            label = POOL_LABELS[pool]
            if not is_double(result["roll"]):
                flipped = judge(flip(result["roll"]), result["target"])
                choices.append({"pool": pool, "use": "flip", "label": f"{label}: swap the digits "
                                f"{result['roll']:02d} → {flipped['roll']:02d} ({flipped['label']})"})
            if side == "attacker" and result["success"] and not result["critical"] and result["superior"] < 2:
                choices.append({"pool": pool, "use": "upgrade",
                                "label": f"{label}: one more superior success (+1d6 damage on a hit)"})
            if result["critical"] and not result["success"]:
                choices.append({"pool": pool, "use": "soften",
                                "label": f"{label}: make the critical failure a plain failure"})
        return choices

    @contract.declaration("spend")
    def _do_spend(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                  events: list[Event]) -> None:
        c = self._combatant(state, d)
        side = self._reaction_side(state, c)
        pool = self._choice(d, "pool", POOLS, "flex")
        use = self._choice(d, "use", ("flip", "upgrade", "soften"), "flip")
        allowed = {(o["pool"], o["use"]) for o in self.reaction_choices(state, side)}
        if (pool, use) not in allowed:
            raise IllegalDeclaration(f"{c['name']} cannot spend {POOL_LABELS[pool]} to {use} now")
        p = state["pending"]
        before = p["rolls"][side]
        if use == "flip":
            after = judge(flip(before["roll"]), before["target"])
            text = f"to swap {before['roll']:02d} into {after['roll']:02d}: "
        elif use == "upgrade":
            after = judge(before["roll"], before["target"], 1)
            text = "for one more superior success: "
        else:
            after = dict(before, critical=False, label="failure")
            text = "to soften the critical failure: "
        after["pool_use"] = use
        p["rolls"][side] = after
        c["pools"][pool] -= 1
        p["post"][side]["used"] = True
        p["post"][side]["accepted"] = True
        other = "defender" if side == "attacker" else "attacker"
        if other in p["post"]:
            p["post"][other]["accepted"] = False
        result = contest(p["rolls"]["attacker"], p["rolls"]["defender"])
        text += f"{after['label']}. As it stands: {'a hit' if result == 'hit' else 'a miss'}."
        # which pool, and so how many points are left in it, is the combatant's own number
        events.append(event("pool.spent", f"{c['name']} spends {POOL_LABELS[pool]} {text}", visibility=combatant_visibility(c["id"]),
                            others=told(f"{c['name']} spends a pool point {text}", combatant=c["id"], use=use,
                                        result=without_target(after), standing=result),
                            combatant=c["id"], pool=pool, use=use, result=after, standing=result))
        self._settle_reactions(state, dice, events)

    def _reaction_side(self, state: State, c: Mapping[str, Any]) -> str:
        p = state["pending"]
        if p is None or p["phase"] != "reaction":
            raise IllegalDeclaration("there are no rolled dice waiting for a pool spend")
        if c["id"] == p["attacker"]:
            return "attacker"
        if c["id"] == p["defender"] and "defender" in p["post"]:
            return "defender"
        raise IllegalDeclaration(f"{c['name']} has no roll in this exchange")

    @contract.declaration("accept")
    def _do_accept(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        c = self._combatant(state, d)
        side = self._reaction_side(state, c)
        post = state["pending"]["post"][side]
        if post["accepted"]:
            raise IllegalDeclaration(f"{c['name']} has already accepted the roll")
        post["accepted"] = True
        events.append(event("roll.accepted", f"{c['name']} accepts the dice.", combatant=c["id"]))
        self._settle_reactions(state, dice, events)

    def _settle_reactions(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        p = state["pending"]
        for side, post in p["post"].items():
            if not post["accepted"] and not self.reaction_choices(state, side):
                post["accepted"] = True
        if all(post["accepted"] for post in p["post"].values()):
            self.resolve(state, dice, events)

    # --- damage --------------------------------------------------------------------------------
    def resolve(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        """Settle the exchange once both sides have accepted their dice: the hit or the miss, a called shot,
        the blind attack's chance, damage, armour, wounds, the SOM check and the end of the battle."""
        p = state["pending"]
        a, t = state["combatants"][p["attacker"]], state["combatants"][p["defender"]]
        ar, dr = p["rolls"]["attacker"], p["rolls"]["defender"]
        result = contest(ar, dr)
        exchange: dict[str, Any] = {
            "attacker": a["id"], "defender": t["id"], "weapon": p["weapon"]["name"], "attack": ar, "defence": dr,
            "result": result, "round": state["round"],
        }
        state["pending"] = None
        state["last_exchange"] = exchange
        aim = called_aim_of(p["choices"])
        if aim:
            exchange["called_shot"] = {"aim": aim, "label": called_words(p["choices"]), "came_off": False,
                                       "spot": p["choices"].get("called_spot")}
        if result == "miss":
            why = "the attack fails" if not ar["success"] else f"{t['name']} defends successfully"
            self._called_missed(exchange, a)
            events.append(event("attack.missed", f"{a['name']} misses {t['name']}: {why}."
                                f"{' ' + exchange['called_shot']['text'] if aim else ''}",
                                attacker=a["id"], defender=t["id"], **self._called_data(exchange)))
            return
        if p["choices"]["visibility"] == "blind_chance":
            chance = rolled_by(dice, a["id"]).randint(0, 99, f"{a['name']} blind attack (miss on 00-49)")
            exchange["blind_roll"] = chance.total
            if chance.total < 50:
                exchange["result"] = "miss"
                self._called_missed(exchange, a)
                events.append(event("attack.missed", f"{a['name']} strikes blindly and misses {t['name']} "
                                    f"(rolled {chance.total:02d}, needed 50 or more)."
                                    f"{' ' + exchange['called_shot']['text'] if aim else ''}", rolls=[chance],
                                    attacker=a["id"], defender=t["id"], **self._called_data(exchange)))
                return
            events.append(event("chance.passed", f"The blind attack finds its mark (rolled {chance.total:02d}).",
                                rolls=[chance], attacker=a["id"]))
        crit = ar["critical"]
        what = "critical hit" if crit else ("hit" if not ar["superior"] else
                                            f"hit with {count_of(ar['superior'], 'superior success')}")
        events.append(event("attack.hit", f"{a['name']} scores a {what} on {t['name']}.",
                            attacker=a["id"], defender=t["id"], critical=crit, superior=ar["superior"]))
        came_off = bool(aim) and (crit or ar["superior"] >= 1)
        if aim:
            self._called_hit(exchange, a, t, came_off, events)
        if came_off and aim == "disarm":  # the weapon falls instead of the target taking damage
            self._check_end(state, events)
            return
        count, sides, bonus = parse_dv(p["weapon"]["dv"])
        own = rolled_by(dice, a["id"])
        rolls = [own.roll(count, sides, f"{p['weapon']['name']} damage", bonus)]
        for extra in p["extra"]:
            rolls.append(own.roll(extra["dice"][0], extra["dice"][1], f"{extra['label']} damage"))
        if ar["superior"] and not crit:
            rolls.append(own.roll(ar["superior"], 6, "superior successes"))
        rolled = sum(r.total for r in rolls)
        total = max(0, rolled * 2 if crit else rolled)
        kind = p["weapon"]["armour"]
        armour_full = t["energy_armour"] if kind == "energy" else t["kinetic_armour"]
        armour = armour_after_piercing(armour_full, p["weapon"]["ap"])
        bypass = came_off and aim == "armour"
        if bypass:
            armour = 0
        through = max(0, total - armour)
        wounds = wounds_from(through, t["wound_threshold"])
        t["damage"] += through
        t["wounds"] += wounds
        parts = [f"{rolled}" + (f", doubled to {total}" if crit else "")]
        if bypass:
            parts.append("the called shot slips past the armour")
        else:
            parts.append(f"{kind} armour {armour}" + (f" (halved from {armour_full})" if p["weapon"]["ap"] else ""))
        text = f"Damage to {t['name']}: {'; '.join(parts)}; {through} gets through"
        text += f", {count_of(wounds, 'wound')}." if wounds else "."
        exchange.update({"damage_rolled": rolled, "damage": total, "armour": armour, "through": through,
                         "wounds": wounds})
        # the armour is the target's number, and so is what gets through (its damage) unless the GM
        # shows everyone's Durability numbers; the dice and the wounds are for all to see
        shown = {"through": through} if state["reveal_health"] else {}
        words = f"Damage to {t['name']}: {parts[0]}" + (f"; {through} gets through" if shown else "")
        words += f", {count_of(wounds, 'wound')}." if wounds else "."
        events.append(event("damage.dealt", text, rolls=rolls, visibility=combatant_visibility(t["id"]),
                            others=told(words, rolls=rolls, combatant=t["id"], rolled=rolled, total=total, wounds=wounds,
                                        critical=crit, **shown),
                            combatant=t["id"], rolled=rolled, total=total, armour=armour, through=through, wounds=wounds,
                            critical=crit))
        if t["damage"] >= t["death_rating"] and t["state"] != "dead":
            t["state"] = "dead"
            events.append(event("combatant.killed", f"{t['name']} is killed.", combatant=t["id"]))
        elif t["damage"] >= t["durability"] and t["state"] == "ok":
            t["state"] = "incapacitated"
            events.append(event("combatant.incapacitated", f"{t['name']} is incapacitated.", combatant=t["id"]))
        elif wounds and is_able(t):
            self._wound_check(t, wounds, dice, events, exchange)
        self._check_end(state, events)

    def _wound_check(self, t: dict[str, Any], wounds: int, dice: DiceSource, events: list[Event],
                     exchange: dict[str, Any]) -> None:
        """The SOM check a hit's wounds call for (rulings 6 and 9).

        The check counts every wound the target now has, the new ones included, and its traumas. One wound:
        failing knocks the target down. Two or more at once knock it down whatever the roll; the check then
        decides only whether it is also knocked out.
        """
        several = wounds >= 2
        check_target = t["som_check"] - WOUND_PENALTY * (t["wounds"] + t["traumas"])
        roll = rolled_by(dice, t["id"]).randint(0, 99, f"{t['name']} SOM check")
        res = judge(roll.total, check_target)
        exchange["som_check"] = res
        knocked_down = several or not res["success"]
        knocked_out = several and not res["success"]
        if knocked_down and "prone" not in t["conditions"]:
            t["conditions"].append("prone")
        if knocked_out and "unconscious" not in t["conditions"]:
            t["conditions"].append("unconscious")
        if knocked_out:
            outcome = "knocked out"
        elif several:
            outcome = f"knocked down by {count_of(wounds, 'wound')} at once, but stays conscious"
        else:
            outcome = "knocked down" if knocked_down else "stays on its feet"
        exchange.update({"knocked_down": knocked_down, "knocked_out": knocked_out,
                         "som_text": f"{result_words(res)}, {outcome}"})
        hurt = ", ".join(count_of(n, w) for n, w in ((t["wounds"], "wound"), (t["traumas"], "trauma")) if n)
        text = (f"{t['name']} rolls {res['roll']:02d} against SOM check {check_target} "
                f"({t['som_check']} {signed(-WOUND_PENALTY * (t['wounds'] + t['traumas']))} for {hurt}): "
                f"{result_words(res)}, {outcome}.")
        events.append(event("check.passed" if res["success"] else "check.failed", text, rolls=[roll],
                            visibility=combatant_visibility(t["id"]),
                            others=told(f"{t['name']} rolls {res['roll']:02d} on its SOM check: {result_words(res)}, {outcome}.",
                                        rolls=[roll], combatant=t["id"], check=without_target(res), knocked_down=knocked_down,
                                        knocked_out=knocked_out),
                            combatant=t["id"], check=res, knocked_down=knocked_down, knocked_out=knocked_out))
