// A spec's tensor names as a checkpoint stores them, where one family's checkpoints differ.
#pragma once

#include <functional>
#include <string>

#include "models/decoder_spec.h"

namespace canrun {

// `spec`'s names follow the checkpoint's, as `stored` (whether it holds a tensor) shows them:
// - checkpoints saved before transformers 5 (Qwen2-VL's and Qwen2.5-VL's on the Hub) name the
//   text model model.* and the tower visual.*;
// - an encoder saved with a task head (BertForSequenceClassification) puts its base model's
//   names under spec.base_model_prefix ("bert.") or one of spec.other_base_model_prefixes,
//   and base_model_prefix becomes the one stored;
// - a causal LM's base model saved alone (Qwen3Model, as sentence-transformers saves an
//   embedder) names its tensors without "model.".
void follow_stored_names(DecoderSpec& spec, const std::function<bool(const std::string&)>& stored);

}  // namespace canrun
