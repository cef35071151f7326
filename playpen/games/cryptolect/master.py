"""Cryptolect (LM Playschool 2026 out-of-domain game, GAMES-OOD.md section 4; rules in rules.py).

One player, the Linguist, meets an invented language. For num_rounds rounds it sends up to
probes_per_round English sentences (under a `PROBES:` line) and an informant translates each one exactly,
or says MALFORMED and why. Then it gets an exam: exam_size new English sentences to translate, answered
under `ANSWERS:` (or as exactly exam_size numbered or non-blank lines). A round's answer with no probes, too
many probes, or the wrong number of exam answers is re-prompted once per round and three times per episode;
the next one aborts. The exam is graded by exact match (after rules.normalize) against the answer key the
instance stores (`exam_targets`; the realiser's output where an instance has none): all correct is a
Success, anything less a Lose.

Scores: Main Score = 100 x correct / exam size, NaN when aborted; probes used, malformed probes and token
similarity as diagnostics. Prompts come from the experiment (placeholders $VOCAB$, $SCHEMA$, $SEED_BLOCK$,
$NUM_ROUNDS$, $PROBES_PER_ROUND$, $PROBE_BUDGET$, $EXAM_SIZE$), so the official 2026 instance files play too.
"""

from __future__ import annotations

import math

from clemcore.backends import Model
from clemcore.clemgame import DialogueGameMaster, GameBenchmark, GameScorer, GameSpec, ParseError, Player
from clemcore.clemgame.metrics import BENCH_SCORE, METRIC_ABORTED

from playpen.games.common import ExpertPlayer, log_outcome
from playpen.games.cryptolect import expert, rules


class CryptolectGameMaster(DialogueGameMaster):
    """One field study: investigation rounds, then the exam round."""

    def _on_setup(self, **instance) -> None:
        exp = self.experiment
        self.language = rules.Language.read(instance["language"])
        self.exam: list[dict] = list(instance["exam"])
        self.targets: list[str] = list(instance.get("exam_targets") or
                                       [rules.realize(self.language, m) for m in self.exam])
        self.seed_corpus: list[dict] = list(instance.get("seed_corpus") or [])
        self.num_rounds = int(exp["num_rounds"])
        self.per_round = int(exp["probes_per_round"])
        self.budget = int(exp.get("probe_budget", self.num_rounds * self.per_round))
        self.exam_size = int(exp.get("exam_size", len(self.exam)))
        self.has_seed = bool(exp.get("has_seed", bool(self.seed_corpus)))
        self.probes_used = self.malformed = 0
        self.committed = False
        self.reprompts_round = self.reprompts = 0
        self.results: list[bool] | None = None
        self.similarity = 0.0
        self.linguist = ExpertPlayer(self.player_models[0], "Linguist", expert.respond)
        self.add_player(self.linguist, initial_context=self._initial_prompt())

    def _initial_prompt(self) -> str:
        values = {"$VOCAB$": rules.render_vocabulary(self.language), "$SCHEMA$": rules.render_schema(self.language),
                  "$NUM_ROUNDS$": str(self.num_rounds), "$PROBES_PER_ROUND$": str(self.per_round),
                  "$PROBE_BUDGET$": str(self.budget), "$EXAM_SIZE$": str(self.exam_size)}
        if self.has_seed:
            values["$SEED_BLOCK$"] = rules.render_examples(self.language, self.seed_corpus)
        prompt = self.experiment["initial_prompt"]
        for placeholder, value in values.items():
            prompt = prompt.replace(placeholder, value)
        return prompt

    def _in_exam(self) -> bool:
        return self.current_round >= self.num_rounds

    def _on_before_round(self) -> None:
        self.committed = False
        self.reprompts_round = 0

    def _start_next_round(self) -> bool:
        return self.committed

    def _does_game_proceed(self) -> bool:
        return not self.state.outcome.is_terminal and self.current_round <= self.num_rounds

    def _parse_response(self, player: Player, response: str) -> tuple[str, list[str]]:
        if self._in_exam():
            answers = rules.answers_of(response, self.exam_size)
            if len(answers) != self.exam_size:
                raise ParseError(f"{self.exam_size} answers were expected, {len(answers)} were found",
                                 response=response, key="wrong_answer_count")
            return "exam", answers
        probes = rules.probes_of(response, self.language, self.per_round)
        if not probes:
            raise ParseError("no probe was found (list them under a line 'PROBES:')", response=response,
                             key="missing_probes")
        if len(probes) > self.per_round:
            raise ParseError(f"{len(probes)} probes were sent, at most {self.per_round} are allowed",
                             response=response, key="too_many_probes")
        return "probes", probes

    def _on_parse_error(self, error: ParseError) -> None:
        self.reprompts_round += 1
        self.reprompts += 1
        if self.reprompts_round > rules.REPROMPTS_PER_ROUND or self.reprompts > rules.REPROMPTS_PER_EPISODE:
            self.log_to_self("invalid format", error.reason)
            self.state.abort()
            return
        self.log_to_self("reprompt", error.reason)
        if self._in_exam():
            form = f"ANSWERS:\n1. <sentence 1 in the language>\n... up to {self.exam_size}."
        else:
            form = f"PROBES:\n1. <an English sentence>\n(one to {self.per_round} sentences, one per line, nothing after)"
        self.set_context_for(self.current_player,
                             f"Your answer could not be used: {error.reason}. Please answer again, ending with\n{form}")

    def _advance_game(self, player: Player, parsed: tuple[str, list[str]]) -> None:
        kind, items = parsed
        self.committed = True
        if kind == "exam":
            self._grade(items)
            return
        malformed = sum(not rules.is_probe(p, self.language) for p in items)
        self.probes_used += len(items)
        self.malformed += malformed
        self.log_to_self("round_record", {"kind": "investigation", "round": self.current_round,
                                          "probes_issued": len(items), "malformed": malformed, "probes": items})
        lines = ["The informant says:", *rules.render_translations(self.language, items)]
        left = self.num_rounds - self.current_round - 1
        if left:
            lines.append(f"That was round {self.current_round + 1} of {self.num_rounds}; probes used: "
                         f"{self.probes_used} of {self.budget}. {left} round(s) of questions left, then the exam "
                         f"({self.exam_size} sentences). Send your next PROBES.")
            self.set_context_for(player, "\n".join(lines))
        else:
            self.set_context_for(player, "\n".join(lines) + "\n\n" + rules.render_exam(self.exam))

    def _grade(self, answers: list[str]) -> None:
        self.results = rules.grade(answers, self.targets)
        similarities = [rules.token_similarity(a, t) for a, t in zip(answers, self.targets)]
        self.similarity = sum(similarities) / len(similarities) if similarities else 0.0
        correct = sum(self.results)
        self.log_to_self("round_record", {"kind": "exam", "correct": correct, "size": self.exam_size,
                                          "results": [int(r) for r in self.results],
                                          "token_similarity": self.similarity, "answers": answers,
                                          "targets": self.targets})
        if correct == self.exam_size:
            self.state.succeed()
        else:
            self.state.failed()

    def _on_after_game(self) -> None:
        log_outcome(self)
        self.log_key("episode_result", {
            "outcome": self.state.outcome.value, "completed_exam": self.results is not None,
            "exam_correct": sum(self.results or []), "exam_size": self.exam_size,
            "token_similarity": self.similarity, "probes_used": self.probes_used,
            "malformed_probes": self.malformed, "num_rounds": self.num_rounds, "reprompts": self.reprompts})


DIAGNOSTICS = ("Exam Accuracy", "Exam Correct", "Exam Size", "Token Similarity", "Probes Used", "Malformed Probes")


class CryptolectScorer(GameScorer):
    """Per round: probes and malformed probes, or the exam's result; per episode: Main Score and diagnostics."""

    def compute_round_score(self, round_idx, round_events) -> None:
        record = next((e["action"]["content"] for e in reversed(round_events)
                       if e["action"]["type"] == "round_record"), None)
        if record is None:  # the round ended without an accepted answer (an abort)
            return
        if record["kind"] == "investigation":
            self.log_round_score(round_idx, "Probes Issued", record["probes_issued"])
            self.log_round_score(round_idx, "Malformed Probes", record["malformed"])
        else:
            self.log_round_score(round_idx, "Exam Correct", record["correct"])
            self.log_round_score(round_idx, "Exam Size", record["size"])

    def compute_episode_scores(self, interactions: dict) -> None:
        if interactions[METRIC_ABORTED]:
            for name in (BENCH_SCORE, *DIAGNOSTICS):
                self.log_episode_score(name, math.nan)
            return
        result = interactions["episode_result"]
        correct, size = result["exam_correct"], result["exam_size"]
        self.log_episode_score(BENCH_SCORE, 100 * correct / size)
        self.log_episode_score("Exam Accuracy", correct / size)
        self.log_episode_score("Exam Correct", correct)
        self.log_episode_score("Exam Size", size)
        self.log_episode_score("Token Similarity", result["token_similarity"])
        self.log_episode_score("Probes Used", result["probes_used"])
        self.log_episode_score("Malformed Probes", result["malformed_probes"])


class CryptolectBenchmark(GameBenchmark):
    def __init__(self, game_spec: GameSpec):
        super().__init__(game_spec)

    def create_game_master(self, experiment: dict, player_models: list[Model]) -> CryptolectGameMaster:
        return CryptolectGameMaster(self.game_spec, experiment, player_models)

    def create_game_scorer(self, experiment: dict, game_instance: dict) -> CryptolectScorer:
        return CryptolectScorer(self.game_name, experiment, game_instance)
