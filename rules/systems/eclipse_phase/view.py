"""What each viewer of an Eclipse Phase battle sees: the combatants, the exchange, distances, legal declarations.

A side's numbers (target numbers, skills, modifiers, pools, armour) are shown only to those who see them:
its player and the GM (and Durability to everyone once the GM reveals it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...core import State, Viewer
from .board import adjacent, distance_squares, foes_first, is_able, metres_between
from .called_shots import called_aim_of, called_words
from .computer import Computer
from .data import (
    AIM_MODES,
    CALLED_AIMS,
    CONDITIONS,
    INITIATIVE_DUE,
    MODES,
    POOL_BONUS,
    POOL_LABELS,
    POOLS,
    SKILLS,
    SPOT_LENGTH,
    VISIBILITY,
)
from .rulings import breakdown, contest, count_of, range_band, signed, target_number, without_target


class View(Computer):
    """Each viewer's projection of the state, and what it may declare now."""

    def sees_numbers(self, state: State, viewer: Viewer, cid: str) -> bool:
        """Whether ``viewer`` sees the numbers of combatant ``cid``: the GM and its own player do."""
        return viewer.is_gm or viewer.controls(state, cid)

    @staticmethod
    def _coarse(c: Mapping[str, Any]) -> dict[str, Any]:
        if c["state"] == "dead":
            return {"level": 0.0, "label": "dead"}
        if c["state"] == "incapacitated":
            return {"level": 0.0, "label": "incapacitated"}
        share = c["damage"] / c["durability"]
        for limit, level, label in ((0, 1.0, "unhurt"), (0.25, 0.8, "lightly hurt"), (0.5, 0.6, "hurt"),
                                    (0.75, 0.4, "badly hurt")):
            if share <= limit:
                return {"level": level, "label": label}
        return {"level": 0.15, "label": "near collapse"}

    def _project_combatant(self, state: State, c: Mapping[str, Any], viewer: Viewer) -> dict[str, Any]:
        public = {k: copy.deepcopy(c[k]) for k in ("id", "name", "side", "controller", "seat", "morph", "size",
                                                      "x", "y", "wounds", "conditions", "state", "full_defence")}
        public["weapons"] = [w["name"] for w in c["weapons"]]
        public["health"] = self._coarse(c)
        public["mine"] = viewer.controls(state, c["id"]) and not viewer.is_gm
        # the total comes from the Initiative stat: the combatant's own number
        public["initiative_total"] = (state["initiative"].get(c["id"], {}).get("total")
                                      if self.sees_numbers(state, viewer, c["id"]) else None)
        public["markers"] = ([count_of(c["wounds"], "wound")] if c["wounds"] else []) + [
            CONDITIONS[k] for k in c["conditions"]] + (["full defence"] if c["full_defence"] else []) + [
            f"{w['name']} dropped" for w in c["weapons"] if w.get("dropped_at")]
        if self.sees_numbers(state, viewer, c["id"]) or state["reveal_health"]:
            public.update({k: c[k] for k in ("damage", "durability", "wound_threshold", "death_rating")})
        if self.sees_numbers(state, viewer, c["id"]):
            public.update({k: copy.deepcopy(c[k]) for k in (
                "morph_type", "base_move", "full_move", "som", "som_check", "initiative", "fray", "melee", "guns",
                "athletics", "traumas", "energy_armour", "kinetic_armour", "armour_name", "pools", "pools_max",
                "aim", "modifiers")})
            public["weapon_stats"] = copy.deepcopy(c["weapons"])
        return public

    def _project_pending(self, state: State, viewer: Viewer) -> dict[str, Any] | None:
        """The exchange in progress: a side's target number, skill, modifiers, pool and weapon numbers
        only for those who see that side's numbers (its player and the GM); the dice for everyone."""
        p = state["pending"]
        if p is None:
            return None
        a, t = state["combatants"][p["attacker"]], state["combatants"][p["defender"]]
        waiting = []
        if p["phase"] == "defence":
            waiting.append({"combatant": t["id"], "what": "defence",
                            "text": f"Waiting for {t['name']} to choose a defence."})
        else:
            for side, post in p["post"].items():
                cid = p["attacker" if side == "attacker" else "defender"]
                if not post["accepted"]:
                    waiting.append({"combatant": cid, "what": "reaction",
                                    "text": f"Waiting for {state['combatants'][cid]['name']} to accept or spend."})
        view = {k: copy.deepcopy(p[k]) for k in ("attacker", "defender", "weapon", "skill", "skill_value", "choices",
                                                  "mods", "extra", "pool", "target", "metres", "phase", "defence",
                                                  "rolls")}
        view["attacker_name"], view["defender_name"] = a["name"], t["name"]
        if called_aim_of(p["choices"]):
            view["called_label"] = called_words(p["choices"])
        view["skill_label"] = SKILLS[p["skill"]]
        view["breakdown"] = breakdown(SKILLS[p["skill"]], p["skill_value"], p["mods"], POOL_BONUS if p["pool"] else 0)
        if p["rolls"]:
            view["standing"] = contest(p["rolls"]["attacker"], p["rolls"]["defender"])
        view["waiting"] = waiting
        if not self.sees_numbers(state, viewer, a["id"]):
            view.update(skill_value=None, mods=[], pool=None, target=None, breakdown=None,
                        weapon={k: p["weapon"][k] for k in ("name", "skill")})
            if view["rolls"]:
                view["rolls"]["attacker"] = without_target(view["rolls"]["attacker"])
        if not self.sees_numbers(state, viewer, t["id"]):
            if view["defence"]:
                view["defence"] = {k: view["defence"][k] for k in ("method", "skill_label")}
            if view["rolls"]:
                view["rolls"]["defender"] = without_target(view["rolls"]["defender"])
        return view

    def _project_exchange(self, state: State, viewer: Viewer) -> dict[str, Any] | None:
        """The last attack: its target numbers, the armour and what got through (the defender's
        damage, unless the GM shows everyone's Durability numbers) only for those who see them."""
        x: dict[str, Any] | None = copy.deepcopy(state["last_exchange"])
        if x is None:
            return None
        if not self.sees_numbers(state, viewer, x["attacker"]):
            x["attack"] = without_target(x["attack"])
        if not self.sees_numbers(state, viewer, x["defender"]):
            x["defence"] = without_target(x.get("defence"))
            x["armour"] = None
            if "som_check" in x:
                x["som_check"] = without_target(x["som_check"])
            if "through" in x and not state["reveal_health"]:
                x["through"] = None
        return x

    def _distances(self, state: State, origin: str | None) -> dict[str, Any] | None:
        if origin is None:
            return None
        a = state["combatants"][origin]
        rows = {}
        for o in state["combatants"].values():
            if o["id"] == origin:
                continue
            metres = metres_between(state, a, o)
            bands = {str(i): range_band(metres, w["range"]) for i, w in enumerate(a["weapons"])
                     if w["skill"] != "melee"}
            rows[o["id"]] = {"name": o["name"], "metres": metres, "squares": round(distance_squares(a, o), 2),
                             "adjacent": adjacent(a, o, state), "band": range_band(metres, 10**6)["band"]
                             if metres <= 10 else "beyond close", "weapons": bands}
        return {"from": origin, "to": rows}

    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        combatants = [self._project_combatant(state, c, viewer) for c in state["combatants"].values()]
        # a combatant's place and die for everyone; its score and total (its Initiative) for those who see its numbers
        sighted = {cid for cid in state["order"] if self.sees_numbers(state, viewer, cid)}
        order = [{"id": cid, "name": state["combatants"][cid]["name"],
                  "total": state["initiative"][cid]["total"] if cid in sighted else None,
                  "roll": state["initiative"][cid]["roll"], "score": state["initiative"][cid]["score"] if cid in sighted else None,
                  "active": cid == state["active"], "done": i < state["turn_index"],
                  "able": is_able(state["combatants"][cid])}
                 for i, cid in enumerate(state["order"])]
        active = state["active"]
        view = {
            "system": self.id,
            "status": state["status"],
            "round": state["round"],
            "options": {k: state["options"][k] for k in ("metres_per_square", "width", "height")},
            "reveal_health": state["reveal_health"],
            "blocked": copy.deepcopy(state.get("blocked", [])),
            "order": order,
            "active": active,
            "turn": copy.deepcopy(state["turn"]) if active else None,
            "combatants": combatants,
            "pending": self._project_pending(state, viewer),
            "last_exchange": self._project_exchange(state, viewer),
            "distances": self._distances(state, active),
            "outcome": copy.deepcopy(state.get("outcome")),
            "you": {"role": viewer.role, "combatants": viewer.own_combatants(state)},
        }
        if active:
            view["active_name"] = state["combatants"][active]["name"]
        if state.get("initiative_due") and state["status"] == "active":
            typists = self._initiative_typists(state)
            view["initiative_due"] = {"text": INITIATIVE_DUE, "combatants": typists,
                                      "rollers": [state["combatants"][cid]["name"] for cid in typists]}
        view["legal"] = self.legal(state, viewer)
        return view

    # --- the common view shape (rules/contract.py's VIEW_KEYS), read off the projection above -------------
    def view_acting(self, view: Mapping[str, Any]) -> dict[str, Any]:
        if view.get("status") != "active":
            return {"combatants": [], "label": "Over"}
        pending, due = view.get("pending"), view.get("initiative_due")
        if isinstance(due, Mapping):
            return {"combatants": list(due.get("combatants") or []), "label": f"Round {view.get('round')}, initiative"}
        if isinstance(pending, Mapping) and pending.get("phase") == "defence" and pending.get("defender"):
            return {"combatants": [pending["defender"]], "label": f"Round {view.get('round')}, defence"}
        active = view.get("active")
        named = f", {view.get('active_name')}'s turn" if active else ""
        return {"combatants": [active] if active else [], "label": f"Round {view.get('round')}{named}"}

    def view_fighter_out(self, combatant: Mapping[str, Any]) -> bool:
        return combatant.get("state", "ok") != "ok" or "unconscious" in (combatant.get("conditions") or [])

    def view_grid(self, view: Mapping[str, Any]) -> dict[str, Any] | None:
        options = view.get("options") or {}
        return {key: options[key] for key in ("width", "height", "metres_per_square") if key in options}

    # --- legal declarations -----------------------------------------------------------------------------
    def legal(self, state: State, viewer: Viewer) -> list[dict[str, Any]]:
        if state["status"] != "active" or viewer.role == "spectator":
            return []
        out: list[dict[str, Any]] = []
        acts_for = [cid for cid in state["combatants"] if viewer.controls(state, cid)]
        p = state["pending"]
        if p is not None:
            if p["phase"] == "defence":
                if p["defender"] in acts_for:
                    out.append(self._defend_template(state, p))
                if p["attacker"] in acts_for:
                    out.append({"type": "cancel_attack", "combatant": p["attacker"], "label": "Withdraw the attack"})
            else:
                for side in p["post"]:
                    cid = p["attacker" if side == "attacker" else "defender"]
                    if cid not in acts_for or p["post"][side]["accepted"]:
                        continue
                    choices = self.reaction_choices(state, side)
                    name = state["combatants"][cid]["name"]
                    if choices:
                        out.append({"type": "spend", "combatant": cid, "label": f"Spend a pool point ({name})",
                                    "choices": choices})
                    out.append({"type": "accept", "combatant": cid, "label": f"Accept the dice ({name})"})
        active = state["active"]
        if p is None and active in acts_for:
            out.extend(self._turn_templates(state, active))
        if viewer.is_gm:
            if state.get("initiative_due"):
                out.append({"type": "roll_initiative", "label": "Roll initiative"})
            out.extend(self._gm_templates(state))
        return out

    def _turn_templates(self, state: State, cid: str) -> list[dict[str, Any]]:
        c = state["combatants"][cid]
        turn = state["turn"]
        name = c["name"]
        out: list[dict[str, Any]] = []
        if "prone" in c["conditions"]:
            out.append({"type": "stand", "combatant": cid, "label": f"Stand up ({name})"})
        else:
            left = round(c["full_move"] - turn["moved"], 2)
            reach = self.reachable(state, c) if left > 0 else []
            if reach:
                out.append({"type": "move", "combatant": cid, "label": f"Move {name}",
                            "max_metres": left, "base_left": round(max(0.0, c["base_move"] - turn["moved"]), 2),
                            "reachable": [list(sq) for sq in reach]})
        if not turn["complex_used"]:
            for i, w in enumerate(c["weapons"]):
                if w.get("dropped_at") and self._within_reach(c, w["dropped_at"]):
                    out.append({"type": "pick_up", "combatant": cid, "weapon": i,
                                "label": f"Pick up the {w['name']} (uses the action)"})
            attack = self._attack_template(state, c)
            if any(w["preview"] for w in attack["weapons"]):
                out.append(attack)
            out.append({"type": "full_defence", "combatant": cid, "label": "Full defence (+30 until your next turn)"})
            others = [{"id": o["id"], "name": o["name"], "ally": o["side"] == c["side"]}
                      for o in foes_first(state, c) if o["state"] != "dead"]
            if self._can_aim(c) and others:
                out.append({"type": "aim", "combatant": cid, "label": "Aim", "targets": others,
                            "complex_choices": ([[False, "Quick aim: +10 to single shots this turn"]]
                                                if not turn["quick_aimed"] else [])
                            + [[True, "Careful aim: +30 to single shots next turn (uses the action)"]]})
        out.append({"type": "end_turn", "combatant": cid, "label": f"End {name}'s turn"})
        return out

    def _attack_template(self, state: State, c: Mapping[str, Any]) -> dict[str, Any]:
        targets = []
        for o in foes_first(state, c):
            if o["state"] == "dead":
                continue
            metres = metres_between(state, c, o)
            held = self.held_weapon(o)
            targets.append({"id": o["id"], "name": o["name"], "side": o["side"], "metres": metres,
                            "adjacent": adjacent(c, o, state), "can_defend": self.can_defend(o),
                            "holds": o["weapons"][held]["name"] if held is not None else None,
                            "ally": o["side"] == c["side"]})
        weapons = []
        for i, w in enumerate(c["weapons"]):
            previews = {}
            for t in targets:
                if (w["skill"] == "melee" and not t["adjacent"]) or w.get("dropped_at"):
                    continue
                mods, extra = self.attack_modifiers(state, c["id"], t["id"], w, {})
                previews[t["id"]] = {"target": target_number(c[w["skill"]], mods), "mods": mods,
                                     "band": range_band(t["metres"], w["range"])["band"] if w["skill"] != "melee"
                                     else "melee reach"}
            weapons.append({"index": i, "name": w["name"], "skill": w["skill"], "skill_label": SKILLS[w["skill"]],
                            "skill_value": c[w["skill"]], "dv": w["dv"], "armour": w["armour"], "ap": w["ap"],
                            "range": w["range"], "modes": [[m, MODES[m]] for m in w["modes"]],
                            "two_handed": w["two_handed"], "preview": previews,
                            "dropped": bool(w.get("dropped_at"))})
        options = [
            {"name": "superior_position", "label": "Superior position (+20)", "kind": "bool"},
            {"name": "called_shot", "label": "Called shot (−10; needs a superior success or a critical)",
             "kind": "choice", "choices": [["none", "none"]] + [[k, v] for k, v in CALLED_AIMS.items()],
             "spot_length": SPOT_LENGTH},
            {"name": "one_handed", "label": "Two-handed weapon in one hand (−20)", "kind": "bool",
             "only": "two_handed"},
            {"name": "visibility", "label": "Visibility", "kind": "choice",
             "choices": [[k, f"{v[0]} ({signed(v[1])})" if v[1] else v[0]] for k, v in VISIBILITY.items()]},
            {"name": "bonus", "label": "Burst, full automatic or aggressive bonus", "kind": "choice",
             "choices": [["damage", "extra damage dice"], ["accuracy", "to hit instead"]]},
            {"name": "aggressive", "label": "Aggressive melee (+10 or +1d10 damage; −10 to your Fray dodges "
             "until your next turn)", "kind": "bool", "only": "melee"},
        ]
        if self._full_move_made(state, c):
            options.append({"name": "charge", "label": "Charge after the full move (−10 instead of −20, +1d6 damage)",
                            "kind": "bool", "only": "melee"})
        pools = [[p, f"{POOL_LABELS[p]} ({c['pools'][p]} left): +20"] for p in POOLS if c["pools"][p] > 0]
        aim = c.get("aim")
        aimed = None
        if aim and self._aim_ready(c, aim["target"]):
            aim_name = state["combatants"][aim["target"]]["name"]
            aimed = {"target": aim["target"], "bonus": aim["bonus"], "modes": list(AIM_MODES),
                     "text": f"Aimed at {aim_name} (+{aim['bonus']}): only single shots at {aim_name}."}
        return {"type": "attack", "combatant": c["id"], "label": f"Attack ({c['name']})", "targets": targets,
                "weapons": weapons, "options": options, "pools": [["none", "no pool"]] + pools,
                "full_move": self._full_move_made(state, c), "aim": aimed}

    def _defend_template(self, state: State, p: Mapping[str, Any]) -> dict[str, Any]:
        c = state["combatants"][p["defender"]]
        pools = [[k, f"{POOL_LABELS[k]} ({c['pools'][k]} left): +20"] for k in POOLS if c["pools"][k] > 0]
        return {"type": "defend", "combatant": c["id"], "label": f"Defend ({c['name']})",
                "methods": self.defence_options(state, p),
                "options": [{"name": "superior_position", "label": "Superior position (+20)", "kind": "bool"}],
                "pools": [["none", "no pool"]] + pools, "attack_target": p["target"]}

    def _gm_templates(self, state: State) -> list[dict[str, Any]]:
        ids = [[cid, c["name"]] for cid, c in state["combatants"].items()]
        templates: list[dict[str, Any]] = [
            {"type": "move", "combatant": None, "label": "Place a token anywhere", "anywhere": True,
             "combatants": ids},
            {"type": "modifier", "label": "Add a labelled modifier", "combatants": ids,
             "applies": [["all", "attack and defence"], ["attack", "attack"], ["defence", "defence"]],
             "min": -60, "max": 60},
            {"type": "clear_modifiers", "label": "Clear a combatant's extra modifiers", "combatants": ids},
            {"type": "adjust", "label": "Set damage and wounds", "combatants": ids,
             "current": {cid: [c["damage"], c["wounds"]] for cid, c in state["combatants"].items()}},
            {"type": "condition", "label": "Set or clear a condition", "combatants": ids,
             "conditions": [[k, v] for k, v in CONDITIONS.items()]},
            {"type": "reveal", "label": "Hide Durability numbers" if state["reveal_health"]
             else "Show everyone's Durability numbers", "on": not state["reveal_health"]},
        ]
        return templates + ([{"type": "advance", "label": "Let the computer act"}] if self._computer_waiting(state) else [])
