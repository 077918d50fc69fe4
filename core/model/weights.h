#pragma once
// Weight bytes of a model as its checkpoint stores them: per parameter group, with the quantization scales.

#include "core/model/model.h"

namespace sp {

/// Parameters of a group over the whole model (MTP layers and the vision encoder left out). Attention
/// includes the linear-attention layers and the sparse-attention indexer; its norms, sinks and gates'
/// per-head vectors are in Norms (kept in the compute dtype by every format), counted as all of the model's
/// vectors.
double paramsOf(const Model& m, ParamGroup g);

/// Weight matrices of a group over the whole model: what per-tensor scales are counted against.
double matricesOf(const Model& m, ParamGroup g);

/// Bytes one parameter of the group takes, with its share of the group/block/channel scales but not the
/// per-tensor scales: the compute dtype (Model::weights when unquantized) or the quantized element plus
/// scaleBytes/groupSize (NVFP4: 0.5 + 1/16 = 0.5625).
double weightBytesPerParam(const Model& m, ParamGroup g);

/// Bytes of the group: paramsOf x weightBytesPerParam, plus tensorScaleBytes per matrix when quantized.
double weightBytes(const Model& m, ParamGroup g);

/// Bytes of all weights (MTP layers left out).
double weightBytes(const Model& m);

/// The dtype an unquantized group is kept in: the checkpoint's compute dtype (its torch_dtype).
Dtype unquantizedDtype(const Model& m);

} // namespace sp
