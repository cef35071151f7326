"""Token-level trajectories: each player's turns as one sequence, with the model's own tokens marked."""

from __future__ import annotations

from playpen.backends import Generation, load_model
from playpen.backends.hf import HFModel
from playpen.engine import Engine, tasks_from_instances
from playpen.games.wordle import expert
from playpen.registry import load_instances, resolve_model_spec, select_games


class ExpertTokens(HFModel):
    """The tiny model's tokenizer and chat template, but answering with the wordle expert's text: real
    tokens over multi-turn episodes, without training a model first."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.decoder = None  # answered here, whole batches at a time, not by the streaming decoding loop

    def generate_batch(self, batch, previous=None):
        results, rows, prompts = self.render_batch(batch, previous)
        for i, prompt in zip(rows, prompts):
            ids = self.tokenizer(expert.guesser_response(batch[i]), add_special_tokens=False)["input_ids"]
            ids.append(self.tokenizer.eos_token_id)
            results[i] = Generation(self.tokenizer.decode(ids, skip_special_tokens=True), prompt_ids=prompt,
                                    completion_ids=ids, logprobs=[-0.5] * len(ids))
        return results


def test_turns_stitch_into_one_sequence_with_only_the_models_tokens_marked(tiny):
    spec = resolve_model_spec(tiny)
    base = load_model(spec, max_tokens=200)
    model = ExpertTokens(spec, model=base.model, tokenizer=base.tokenizer)
    model.set_gen_args(temperature=0.0, max_tokens=200)
    game = select_games("wordle")[0]
    results = Engine([model], progress=False).run(tasks_from_instances(game, load_instances(game))[:4])
    tokenizer = model.tokenizer
    for result in results:
        assert result.outcome == "success"
        player = result.players[0]
        assert len(player.turns) >= 2
        for before, after in zip(player.turns, player.turns[1:]):  # each prompt continues the last one
            assert after.prompt_ids[: len(before.prompt_ids) + len(before.completion_ids)] == \
                before.prompt_ids + before.completion_ids
        sequence = player.token_sequence()
        assert sequence.prompt_ids == player.turns[0].prompt_ids
        generated = [t for t, m in zip(sequence.completion_ids, sequence.generated_mask) if m]
        assert tokenizer.decode(generated) == "".join(t.text + tokenizer.eos_token for t in player.turns)
        assert sum(sequence.generated_mask) == sum(len(t.completion_ids) for t in player.turns)
        assert len(sequence.logprobs) == len(sequence.completion_ids)
        last = player.turns[-1]
        assert sequence.prompt_ids + sequence.completion_ids == last.prompt_ids + last.completion_ids
