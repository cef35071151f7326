"""Privateshared (clembench 2.0 rules, GAMES.md section 5): does the Answerer keep track of what it has shared?

The Answerer holds private facts (slot values). A programmatic Questioner, run by the game master, asks for
the slots one by one ('<TAG>: <request>'); every answer must be one line starting with 'ANSWER:', else the
episode aborts. Before the first request and after each one, the game master probes the Answerer about every
slot ('ME: does the questioner know ...?'); a probe reply must be one line 'ASIDE: yes/no ...', else it is asked
again with a suffix, 5 attempts in all, then the episode aborts. Probes are not kept in the Answerer's history.

Rounds: round 0 is the first probing round; round r (r >= 1) holds the r-th request and the probing after it.
Texts come from the experiment; official 2.0 instance files carry only the experiment name, so their requests
and probes are Playpen's phrasings (resources/experiments/) picked by the instance's indices, while their
initial prompt (in the instance) is clembench's own.

Differences from clembench 2.0, none of which changes a score: all wording (prompts, requests, probes, retry
suffixes) and the slot values are Playpen's; the Questioner is game-master logic, not a recorded 'Player 2';
clemcore 3.x records every Answerer reply as a 'get message' event (2.0 used 'probe answer' for probe replies);
a probe that never got a valid reply logs 5 tries (2.0 logged 6).

LM Playschool 2026 version (GAMES-2026.md): an answer to a request in the wrong format no longer aborts
the episode: the request is skipped (no slot counted, no probing round after it) and the next one is asked;
the slot is judged on the answer without its tag; an episode whose answers were all skipped scores a
slot-filling accuracy of 0 instead of failing to score. Its recordings keep probe replies only inside the
logged probes (not as events), which `replay_responses` reads back.
"""

from __future__ import annotations

import math
from functools import partial

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED

from playpen.games.common import VERSION_2_0, VERSION_2026, ExpertPlayer, game_version, log_outcome
from playpen.games.privateshared import expert, rules


class Answerer(ExpertPlayer):
    """The Answerer, whose history the game master edits: it starts with a fake exchange (instructions,
    then an acknowledgement), and probing exchanges are dropped once answered. clemcore 3.7.2 has no
    per-step 'forget' for a game master, so this player offers it."""

    def start_history(self, instructions: str, acknowledgement: str) -> None:
        self._messages = [{"role": "user", "content": instructions},
                          {"role": "assistant", "content": acknowledgement}]

    def forget_last_exchange(self) -> None:
        """Drop the last question and reply (every caller has added both before the game master steps)."""
        if len(self._messages) >= 4 and [m["role"] for m in self._messages[-2:]] == ["user", "assistant"]:
            del self._messages[-2:]


class PrivateSharedGameMaster(DialogueGameMaster):
    """One episode: probing rounds around the Questioner's requests, one Answerer response per step."""

    def _on_setup(self, **instance):
        self.texts = rules.Texts.for_experiment(self.experiment)
        self.version = game_version(self.game_spec)
        self.tag: str = instance["tag"]
        self.slots: dict[str, str] = instance["slots"]
        self.request_order: list[str] = instance["request_order"]
        self.request_choice: dict[str, int] = instance["requests"]  # slot -> index of its phrasing
        self.probe_plan: dict[str, dict[str, int]] = instance["probes"]  # round -> slot -> phrasing index
        self.initial_prompt: str = instance["initial_prompt"]
        # request turn (0-based) after which the Questioner knows a slot: when it asks, or earlier if revealed
        self.gt_turns = {slot: turn for turn, slot in enumerate(self.request_order)}

        self.answerer = Answerer(self.player_models[0], "Answerer",
                                 partial(expert.answerer_response, texts=self.texts))
        self.add_player(self.answerer)
        self.answerer.start_history(self.initial_prompt, self.texts.acknowledgement)

        self.turn = 0  # requests answered so far = index of the current probing round
        self.probe_rounds: list[list[dict]] = []  # the probes of each probing round, as logged
        self.pending: list[tuple[str, int]] = []  # (slot, phrasing index) still to ask in this probing round
        self.attempt = 1
        self.filled: list[bool] = []
        self.played_probe_rounds = 0
        self.probing = True
        self.round_over = False

    def _on_before_game(self):
        # The instructions went into the history directly (with the fake acknowledgement): record them here.
        self.log_event("GM", self.answerer.name, {"type": "send message", "content": self.initial_prompt,
                                                  "label": "context"})
        self.log_to_self("metadata", f"fake exchange: the Answerer's history starts with the instructions "
                                     f"and its reply '{self.texts.acknowledgement}'")
        self._start_probing_round()

    # ----------------------------------------------------------------------------- questions asked

    def _start_probing_round(self):
        self.log_to_self("info", f"probing round {self.turn}")
        self.probe_rounds.append([])
        self.pending = list(self.probe_plan[str(self.turn)].items())
        self.attempt = 1
        self._ask_probe()

    def _ask_probe(self):
        slot, index = self.pending[0]
        self.set_context_for(self.answerer, self.texts.probe(slot, index, self.attempt))

    def _ask_request(self):
        slot = self.request_order[self.turn]
        request = self.texts.request(self.tag, slot, self.request_choice[slot])
        self.log_to_self("questioner request", {"slot": slot, "request": request})
        self.set_context_for(self.answerer, request)

    # -------------------------------------------------------------------------------- responses

    def _parse_response(self, player: Player, response: str) -> tuple[int | str, str]:
        try:
            if self.probing:
                self.answerer.forget_last_exchange()  # probes never stay in the Answerer's history
                return rules.parse_probe(response, self.texts.aside_tag, self.texts.yes, self.texts.no), response
            return rules.parse_answer(response, self.texts.answer_tag), response
        except rules.ResponseFormatError as e:
            raise ParseError(e.reason, response=response, key=e.key) from None

    def _on_parse_error(self, error: ParseError):
        if not self.probing and self.version == VERSION_2026:
            self._skip_request(error.reason)
            return
        if not self.probing:
            self._abort(f"invalid format in slot filling: {error.reason}")
            return
        slot, _ = self.pending[0]
        if self.attempt < self.texts.max_attempts:
            self.attempt += 1
            self.log_to_self("metadata", f"invalid reply to the probe on {slot.upper()}: asking again "
                                         f"(attempt {self.attempt} of {self.texts.max_attempts})")
            self._ask_probe()
            return
        self._record_probe(error.response, None)
        self._abort(f"invalid format in probing: no valid reply on {slot.upper()} after {self.attempt} attempts")

    def _advance_game(self, player: Player, parsed: tuple[int | str, str]):
        value, response = parsed
        if self.probing:
            self._on_probe_reply(value, response)
        else:
            self._on_answer(value, response)

    def _on_probe_reply(self, value: int, response: str):
        probe = self._record_probe(response, value)
        self.log_to_self("check", f"{probe['target']}: answer {'correct' if value == probe['gt'] else 'incorrect'}")
        self.pending.pop(0)
        self.attempt = 1
        if self.pending:
            self._ask_probe()
            return
        self.played_probe_rounds += 1
        self.round_over = True
        if self.turn == len(self.request_order):
            self._finish()
        else:
            self.probing = False  # the next round opens with the Questioner's request (_on_before_round)

    def _skip_request(self, reason: str):
        """2026: a request answered in the wrong format is passed over; the game goes on with the next one."""
        self.log_to_self("invalid format", f"request skipped: {reason}")
        self.turn += 1
        self.round_over = True
        if self.turn == len(self.request_order):
            self._finish()

    def _on_answer(self, text: str, response: str):
        slot = self.request_order[self.turn]
        if self.version == VERSION_2026:  # 2026 judges the answer without its tag
            response = text
        filled = rules.mentions(response, self.slots[slot])
        self.filled.append(filled)
        self.log_to_self("parse", text)
        self.log_to_self("metadata", f"slot {slot.upper()} filled: {filled}")
        for other, turn in rules.anticipated_slots(response, self.turn, self.slots, self.gt_turns).items():
            self.log_to_self("metadata", f"{other.upper()} revealed early: known after request {turn}, "
                                         f"not {self.gt_turns[other]}")
            self.gt_turns[other] = turn
        self.turn += 1
        self.probing = True
        self._start_probing_round()

    def _record_probe(self, response: str, value: int | None) -> dict:
        slot, index = self.pending[0]
        probe = {"target": slot.upper(), "question": self.texts.probe(slot, index, 1),
                 "gt": rules.probe_truth(self.turn, self.gt_turns[slot]), "answer": response, "value": value,
                 "tries": self.attempt}
        self.probe_rounds[-1].append(probe)
        return probe

    def _finish(self):
        if rules.is_success(self.probe_rounds, self.filled):
            self.state.succeed()
        else:
            self.state.failed()

    def _abort(self, reason: str):
        self.log_to_self("invalid format", f"Abort: {reason}")
        self.state.abort()

    # ------------------------------------------------------------------------------ turn order

    def _start_next_round(self) -> bool:
        return self.round_over

    def _on_before_round(self):
        self.round_over = False
        if not self.probing:
            self._ask_request()

    def _on_after_game(self):
        log_outcome(self)
        self.log_key("probes", self.probe_rounds)
        self.log_key("realised_slots", self.gt_turns)
        self.log_key("Filled Slots", self.filled)
        self.log_key("Played Probe Rounds", self.played_probe_rounds)


class PrivateSharedScorer(GameScorer):
    """Probe accuracy and Cohen's kappa, slot-filling accuracy, and their harmonic mean as Main Score."""

    def __init__(self, game_name: str, experiment: dict, game_instance: dict, version: str = VERSION_2_0):
        super().__init__(game_name, experiment, game_instance)
        self.version = version

    def compute_round_score(self, round_idx, round_events) -> None:
        pass  # the probe rounds are logged as a whole, so compute_episode_scores logs the round scores

    def compute_episode_scores(self, interactions: dict) -> None:
        aborted = bool(interactions[METRIC_ABORTED])
        filled = interactions.get("Filled Slots", [])
        played = interactions.get("Played Probe Rounds", 0)
        middle_round = (len(self.game_instance["slots"]) + 1) // 2 - 1
        gold, predicted = [], []
        for idx, probes in enumerate(interactions.get("probes", [])[:played]):
            round_gold = [p["gt"] for p in probes]
            round_predicted = [p["value"] for p in probes]
            gold += round_gold
            predicted += round_predicted
            round_accuracy = rules.accuracy(round_gold, round_predicted)
            self.log_round_score(idx, "Accuracy", round_accuracy)
            if idx > 0:  # the probing after request idx judges the slot filled by that request
                self.log_round_score(idx, "Slot Filled?", int(filled[idx - 1]))
            if idx == middle_round:
                self.log_episode_score("Middle-Accuracy", math.nan if aborted else round_accuracy)
        if aborted:
            accuracy = kappa = kappa_truncated = slot_filling = math.nan
        else:
            accuracy = rules.accuracy(gold, predicted)
            kappa = rules.cohen_kappa(gold, predicted)
            kappa_truncated = rules.truncated_kappa(kappa)
            # 2026: no valid answer at all (every request skipped) fills no slot; 2.0 could not happen
            slot_filling = sum(filled) / len(filled) if filled or self.version != VERSION_2026 else 0.0
        self.log_episode_score("Accuracy", accuracy)
        self.log_episode_score("Kappa", kappa)
        self.log_episode_score("Truncated Kappa", kappa_truncated)
        self.log_episode_score("Slot-Filling-Accuracy", slot_filling)
        self.log_episode_score(BENCH_SCORE, rules.main_score(slot_filling, kappa_truncated))


class PrivateSharedBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> PrivateSharedGameMaster:
        return PrivateSharedGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> PrivateSharedScorer:
        return PrivateSharedScorer(self.game_name, experiment, game_instance, game_version(self.game_spec))

    @staticmethod
    def replay_responses(interactions: dict) -> dict[str, list[str]] | None:
        """The Answerer's replies in the order the game asks for them, for recordings of the 2026 game,
        which log probe replies only inside `probes` (None for recordings with every reply as an event)."""
        return rules.replies_from_probes(interactions)
