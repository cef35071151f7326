"""Adventuregame (clembench 2.0 rules, GAMES.md section 10): deliver three objects in a home of six rooms.

The Adventurer reads a description of the room it stands in and answers with one command per turn ("> take
plate"); a programmatic interpreter (world.py) carries the command out or explains why it cannot, and describes
what changed. A response without the leading '>' aborts the episode, as does (planning variant) one without a
"Next actions:" line unless it contains "done". "> done" ends the episode; 50 turns without it abort it. Reaching
the goals does not end the game: it is won when every goal held after some successful action and the adventurer
then says done. Main Score is the share of goal facts that hold at the end.

Quirks of the 2.0 records, reproduced so that recorded episodes score the same:
- Main Score is numeric even when the episode is aborted (format error or turn limit);
- the goals counted at the end are those after the last successful action. In the planning variant the plan is
  tried out after every turn (then undone), and its successful steps count as successful actions: when the
  next real command fails, the goals the plan would have reached are what counts;
- the episode counts as finished once a command reports every goal, even if a goal is undone later; a failed
  command reports the goals after the last successful action, so in the planning variant a plan that would
  reach every goal finishes the episode when the next real command fails;
- a "done" on the last allowed turn still hits the turn limit (aborted).

LM Playschool 2026 version: an aborted episode's Main Score is NaN (the quirk above is gone). Its in-domain
evaluation played fewer experiments (in/instances_2026.json, `-i instances_2026`, see instancegenerator.py);
`playpen eval`'s official validation ids also name the other experiments, so the default file keeps them all.

Prompts come from the experiment (Playpen's instances) or the instance (clembench 2.0 instances carry their own
`prompt`); the world's vocabulary and feedback come from the definition files the instance names.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED

from playpen.games.adventuregame import expert, rules
from playpen.games.adventuregame.world import Outcome, World, definitions_for
from playpen.games.common import VERSION_2_0, VERSION_2026, ExpertPlayer, game_version, log_outcome

DEFAULT_MAX_TURNS = 50
FAIL_TYPES = ("lark_exception", "malformed_command", "undefined_action_verb", "undefined_repr_str",
              "manipulating_room", "taking_from_inventory", "other_room_argument", "domain_trait_type_mismatch",
              "entity_not_accessible", "entity_state_mismatch", "entity_already_inventory", "going_to_current_room",
              "no_exit_to", "inventory_limit_exceeded")


class AdventureGameMaster(DialogueGameMaster):
    """One adventure: a single Adventurer and the world it acts in."""

    def _on_setup(self, **instance):
        self.variant: str = instance.get("variant", self.experiment.get("variant", "basic"))
        self.world = World(definitions_for(instance), instance["initial_state"], instance["goal_state"])
        self.max_turns: int = instance.get("max_turns", DEFAULT_MAX_TURNS)
        prompt = instance.get("prompt") or rules.initial_prompt(self.experiment["prompt_template"], self.world)
        self.adventurer = ExpertPlayer(self.player_models[0], "Adventurer", expert.adventurer_response)
        self.add_player(self.adventurer, initial_context=prompt + self.world.describe_room())

        self.goal_count = len(self.world.goals)
        self.goals_last_success: frozenset = frozenset()  # after the last successful action, real or planned
        self.goals_reported: frozenset = frozenset()  # what the game reports after each real command
        self.finished = False
        self.turns = 0
        self.plans: list[list[str]] = []
        self.invalid_format: str | None = None
        self.turn_limit_reached = False
        self.adventure_info = {"variant": self.variant, "max_turns": self.max_turns,
                               "optimal_turns": instance.get("optimal_turns"), "goal_count": self.goal_count}

    def _parse_response(self, player: Player, response: str) -> str:
        error = rules.format_error(response, self.variant)
        if error is not None:
            reason = "The response must start with '>'." if error == "command_tag_missing" else \
                "The response must contain a 'Next actions:' line."
            raise ParseError(reason, response=response, key=error)
        if self.variant == rules.PLANNING:
            plan = rules.plan_of(response)
            if plan is not None:
                self.plans.append(plan)
                self.log_to_self("turn_plan", plan)
        return rules.command_line(response)

    def _on_parse_error(self, error: ParseError):
        self.invalid_format = error.key
        self.log_to_self("invalid_format", error.key)
        self.state.abort()

    def _advance_game(self, player: Player, command: str):
        outcome = self.world.perform(command)
        self.log_to_self("action_fail" if not outcome.success else "action_info", _outcome_record(outcome))
        before = len(self.goals_reported)
        if outcome.success:
            self.goals_last_success = self.world.goals_achieved()
        # quirk: a failed command reports the goals of the last successful action, planned ones included
        self.goals_reported = self.goals_last_success
        if len(self.goals_reported) == self.goal_count:  # whatever reports every goal finishes the episode
            self.finished = True
        self.log_to_self("goal_status", {"goal_states_achieved": rules.goal_strings(self.goals_reported),
                                         "turn_goal_score": len(self.goals_reported) - before})
        if self.variant == rules.PLANNING and self.plans:
            self._try_plan(self.plans[-1], command)
        self.turns += 1
        if self.turns >= self.max_turns:
            self.turn_limit_reached = True
            self.log_to_self("turn_limit_reached", f"Turn limit {self.max_turns} reached.")
            self.state.abort()
        elif outcome.done:
            self.state.succeed() if self.finished else self.state.failed()
        else:
            self.set_context_for(self.adventurer, outcome.feedback)

    def _try_plan(self, plan: list[str], command: str) -> None:
        """Try the latest plan on a copy of the world, up to its first failure (the original's plan scoring)."""
        trial = self.world.copy()
        successes = 0
        for step in plan:
            if not trial.perform(step).success:
                break
            successes += 1
            self.goals_last_success = trial.goals_achieved()
        followed = int(len(self.plans) >= 2 and self.plans[-2][0] == command)
        self.log_to_self("plan_results", {"plan": plan, "successful_steps": successes,
                                          "plan_command_success_ratio": successes / len(plan),
                                          "plan_followed": followed})

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("adventure_info", self.adventure_info)
        self.log_key("goals_achieved", rules.goal_strings(self.goals_reported))
        self.log_key("game_successfully_finished", self.finished)
        self.log_key("turn_limit_reached", self.turn_limit_reached)
        self.log_key("invalid_format", self.invalid_format)


def _outcome_record(outcome: Outcome) -> dict:
    if outcome.success:
        return {"action_type": outcome.action, "done_action": outcome.done}
    return {"phase": outcome.phase, "fail_type": outcome.fail_type, "action_type": outcome.action}


class AdventureGameScorer(GameScorer):
    """Main Score from the goals reached at the end; action failures and plan quality per round."""

    def __init__(self, game_name: str, experiment: dict, game_instance: dict, version: str = VERSION_2_0):
        super().__init__(game_name, experiment, game_instance)
        self.version = version

    def compute_round_score(self, round_idx, round_events) -> None:
        scores = {"action_parsing_fail": 0, "action_resolution_fail": 0, "successful_action": 0, "goal_score": 0}
        for event in round_events:
            kind, content = event["action"]["type"], event["action"].get("content")
            if kind == "action_fail":
                scores[f"action_{content['phase']}_fail"] = 1
            elif kind == "action_info":
                scores["successful_action"] = 1
            elif kind == "goal_status":
                scores["goal_score"] = content["turn_goal_score"]
            elif kind == "plan_results":
                scores["plan_command_success_ratio"] = content["plan_command_success_ratio"]
                scores["plan_followed"] = content["plan_followed"]
        for name, value in scores.items():
            self.log_round_score(round_idx, name, value)

    def compute_episode_scores(self, interactions: dict) -> None:
        info = interactions["adventure_info"]
        events = [event["action"] for round_events in interactions["turns"] for event in round_events]
        fails = [e["content"] for e in events if e["type"] == "action_fail"]
        successes = [e["content"] for e in events if e["type"] == "action_info"]
        achieved = len(interactions.get("goals_achieved", []))
        # quirk of the 2.0 records: the Main Score stays numeric when the episode is aborted; 2026 makes it NaN
        aborted_2026 = self.version == VERSION_2026 and interactions[METRIC_ABORTED]
        self.log_episode_score(BENCH_SCORE, math.nan if aborted_2026 else rules.main_score(achieved, info["goal_count"]))
        self.log_episode_score("achieved_goal_ratio", achieved / info["goal_count"])
        self.log_episode_score("successful_actions", len(successes))
        self.log_episode_score("action_parsing_fail", sum(f["phase"] == "parsing" for f in fails))
        self.log_episode_score("action_resolution_fail", sum(f["phase"] == "resolution" for f in fails))
        for fail_type in FAIL_TYPES:
            self.log_episode_score(fail_type, sum(f["fail_type"] == fail_type for f in fails))
        self.log_episode_score("turn_limit_loss", int(bool(interactions.get("turn_limit_reached"))))
        done_unfinished = any(s["done_action"] for s in successes) and not interactions.get("game_successfully_finished")
        self.log_episode_score("hallucination_count", int(done_unfinished))
        finished = interactions.get("game_successfully_finished") and not interactions[METRIC_ABORTED]
        turns_over_par = len(interactions["turns"]) - info["optimal_turns"] \
            if finished and info.get("optimal_turns") is not None else math.nan
        self.log_episode_score("turns_over_par", turns_over_par)
        plans = [e["content"] for e in events if e["type"] == "plan_results"]
        if plans:
            self.log_episode_score("plan_average_viability_ratio",
                                   sum(p["plan_command_success_ratio"] for p in plans) / len(interactions["turns"]))
            self.log_episode_score("plan_followed_ratio", sum(p["plan_followed"] for p in plans) / len(interactions["turns"]))


class AdventureGameBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> AdventureGameMaster:
        return AdventureGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> AdventureGameScorer:
        return AdventureGameScorer(self.game_name, experiment, game_instance, game_version(self.game_spec))
