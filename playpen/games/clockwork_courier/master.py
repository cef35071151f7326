"""Clockwork Courier (LM Playschool 2026 out-of-domain game, GAMES-OOD.md section 3; rules in rules.py).

One player, the Courier, must pick up and deliver parcels on a grid whose gates open and close and whose
guards walk on a fixed timetable, all of it told in advance. Each round the Courier commits to a plan of
exactly plan_length moves and predicts where it will stand after it (and, in egocentric mode, its heading):

    POSITION: (x,y) [FACING N]
    PLAN: N N E WAIT S

The plan runs tick by tick (rules.run_plan) and the Courier gets a report: every tick's effect and where
it is (feedback "rich"), or only ok/bump/caught and what it picked up or delivered ("minimal"). A malformed
answer is re-prompted once per round and three times per episode; the next one aborts. The game succeeds
when the last parcel is delivered and is lost after max_rounds plans.

Scores: Main Score = 100 x (0.7 x delivered share + 0.3 x min(1, optimal ticks / ticks used), the latter on
success only), NaN when aborted; Prediction Accuracy, bumps, captures and forfeited ticks as diagnostics.
Prompts come from the experiment (placeholders $MAP$, $LEGEND$, $SCHEDULES$, $PARCELS$, $START$, $HEADING$,
$TICK_BUDGET$, $PLAN_LENGTH$, $MAX_ROUNDS$, $FEEDBACK_NOTE$), so the official 2026 instance files play too.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED, METRIC_SUCCESS

from playpen.games.clockwork_courier import expert, rules
from playpen.games.common import ExpertPlayer, log_outcome

FEEDBACK_NOTES = {
    rules.RICH: "After every plan you are told what each tick did and where you are.",
    rules.MINIMAL: "After every plan you are told only whether each tick went ok, bumped or got you caught, and "
                   "what you picked up or delivered. You are never told where you are: keep track yourself.",
}


class CourierGameMaster(DialogueGameMaster):
    """One delivery run: the world, the courier's state, and the re-prompts spent."""

    def _on_setup(self, **instance) -> None:
        self.world = rules.World.from_instance(instance)
        self.courier_state = rules.Courier.at_start(self.world)
        self.plan_length = int(instance["plan_length"])
        self.budget = int(instance["tick_budget"])
        self.max_rounds = int(instance["max_rounds"])
        self.optimal_ticks = int(instance["optimal_ticks"])
        self.feedback = self.experiment.get("feedback_mode", rules.RICH)
        self.committed = False  # whether this round's plan was accepted
        self.reprompts_round = self.reprompts = 0
        self.answer: rules.Answer | None = None
        self.predictions = self.predictions_correct = 0
        self.courier = ExpertPlayer(self.player_models[0], "Courier", expert.respond)
        self.add_player(self.courier, initial_context=self._initial_prompt())

    def _initial_prompt(self) -> str:
        world = self.world
        values = {"$MAP$": rules.render_map(world), "$LEGEND$": rules.render_legend(world),
                  "$SCHEDULES$": rules.render_schedules(world), "$PARCELS$": rules.render_parcels(world),
                  "$START$": rules.show(world.start), "$HEADING$": world.heading,
                  "$TICK_BUDGET$": str(self.budget), "$PLAN_LENGTH$": str(self.plan_length),
                  "$MAX_ROUNDS$": str(self.max_rounds), "$FEEDBACK_NOTE$": FEEDBACK_NOTES[self.feedback]}
        prompt = self.experiment["initial_prompt"]
        for placeholder, value in values.items():
            prompt = prompt.replace(placeholder, value)
        return prompt

    def _on_before_round(self) -> None:
        self.committed = False
        self.reprompts_round = 0

    def _start_next_round(self) -> bool:
        return self.committed

    def _does_game_proceed(self) -> bool:
        return not self.state.outcome.is_terminal and self.current_round < self.max_rounds

    def _parse_response(self, player: Player, response: str) -> rules.Answer:
        try:
            answer = rules.parse_answer(response, self.world.moves, self.plan_length,
                                        self.world.mode == rules.EGOCENTRIC)
        except rules.AnswerError as e:
            raise ParseError(e.reason, response=response, key=e.key) from None
        return answer

    def _on_parse_error(self, error: ParseError) -> None:
        self.reprompts_round += 1
        self.reprompts += 1
        if self.reprompts_round > rules.REPROMPTS_PER_ROUND or self.reprompts > rules.REPROMPTS_PER_EPISODE:
            self.log_to_self("invalid format", error.reason)
            self.state.abort()
            return
        self.log_to_self("reprompt", error.reason)
        facing = " FACING <N, E, S or W>" if self.world.mode == rules.EGOCENTRIC else ""
        self.set_context_for(self.current_player, (
            f"Your answer could not be used: {error.reason}. Please answer again, ending with these two lines:\n"
            f"POSITION: (x,y){facing}\nPLAN: <{self.plan_length} moves out of {', '.join(self.world.moves)}>"))

    def _advance_game(self, player: Player, answer: rules.Answer) -> None:
        courier, world = self.courier_state, self.world
        round_index = self.current_round
        start_tick = courier.tick
        result = rules.run_plan(world, courier, list(answer.moves), start_tick + self.plan_length)
        correct = answer.position == courier.cell and (world.mode != rules.EGOCENTRIC or answer.facing == courier.heading)
        self.predictions += 1
        self.predictions_correct += correct
        self.committed = True
        self.log_to_self("round_result", {
            "round": round_index, "start_tick": start_tick, "end_tick": courier.tick, "plan": list(answer.moves),
            "ticks": [{"t": t.tick, "move": t.move, "effect": t.effect, "cell": list(t.cell), "heading": t.heading,
                       "picked_up": t.picked_up, "delivered": t.delivered} for t in result.ticks],
            "predicted": list(answer.position), "predicted_heading": answer.facing,
            "actual": list(courier.cell), "actual_heading": courier.heading,
            "prediction_correct": int(correct), "bumps": sum(t.bumped for t in result.ticks),
            "caught": int(result.caught is not None), "forfeited_ticks": result.forfeited,
            "deliveries": sum(len(t.delivered) for t in result.ticks)})
        if len(courier.delivered) == len(world.parcels):
            self.log_to_self("all parcels delivered", courier.tick)
            self.state.succeed()
        elif round_index + 1 >= self.max_rounds:
            self.log_to_self("out of plans", courier.tick)
            self.state.failed()
        else:
            rounds_left = self.max_rounds - round_index - 1
            self.set_context_for(player, rules.round_report(result, courier, world, self.feedback, round_index + 1,
                                                            start_tick, self.budget, self.plan_length, rounds_left))

    def _on_after_game(self) -> None:
        courier = self.courier_state
        log_outcome(self)
        self.log_key("episode_result", {
            "outcome": self.state.outcome.value, "delivered": len(courier.delivered),
            "parcels": len(self.world.parcels), "used_ticks": courier.tick, "tick_budget": self.budget,
            "optimal_ticks": self.optimal_ticks, "plans": self.predictions, "bumps": courier.bumps,
            "captures": courier.captures, "forfeited_ticks": courier.forfeited,
            "predictions_correct": self.predictions_correct, "reprompts": self.reprompts})


DIAGNOSTICS = ("Delivery Rate", "Ticks Used", "Optimal Ticks", "Efficiency", "Prediction Accuracy", "Bump Count",
               "Capture Count", "Forfeited Ticks")


class CourierScorer(GameScorer):
    """Per plan: prediction, bumps, capture, deliveries, wasted ticks; per episode: Main Score and diagnostics."""

    def compute_round_score(self, round_idx, round_events) -> None:
        record = next((e["action"]["content"] for e in reversed(round_events)
                       if e["action"]["type"] == "round_result"), None)
        if record is None:  # the round ended without a plan (an abort)
            return
        self.log_round_score(round_idx, "Prediction Correct", record["prediction_correct"])
        self.log_round_score(round_idx, "Bumps", record["bumps"])
        self.log_round_score(round_idx, "Caught", record["caught"])
        self.log_round_score(round_idx, "Deliveries", record["deliveries"])
        self.log_round_score(round_idx, "Wasted Ticks", record["bumps"] + record["forfeited_ticks"])

    def compute_episode_scores(self, interactions: dict) -> None:
        if interactions[METRIC_ABORTED]:
            for name in (BENCH_SCORE, *DIAGNOSTICS):
                self.log_episode_score(name, math.nan)
            return
        result = interactions["episode_result"]
        success = bool(interactions[METRIC_SUCCESS])
        used, optimal = result["used_ticks"], result["optimal_ticks"]
        self.log_episode_score(BENCH_SCORE, rules.main_score(result["delivered"], result["parcels"], success,
                                                             optimal, used))
        self.log_episode_score("Delivery Rate", result["delivered"] / result["parcels"])
        self.log_episode_score("Ticks Used", used)
        self.log_episode_score("Optimal Ticks", optimal)
        self.log_episode_score("Efficiency", min(1.0, optimal / used) if success and used else math.nan)
        plans = result["plans"]
        self.log_episode_score("Prediction Accuracy", result["predictions_correct"] / plans if plans else math.nan)
        self.log_episode_score("Bump Count", result["bumps"])
        self.log_episode_score("Capture Count", result["captures"])
        self.log_episode_score("Forfeited Ticks", result["forfeited_ticks"])


class CourierBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> CourierGameMaster:
        return CourierGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> CourierScorer:
        return CourierScorer(self.game_name, experiment, game_instance)

