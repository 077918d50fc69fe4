// The architectures' distinctive layers as the cost model sees them (layer kinds, MoE placement, KV and state
// bytes), quantized checkpoints' weight bytes, and models by Hub id from a local Hugging Face cache.
#include "core/io/formats.h"
#include "core/model/weights.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace sp;

namespace {
const std::string kHf = SHARDPLAN_TESTDATA_DIR "/hf/";

Model load(const std::string& file) {
    auto m = loadModel(kHf + file);
    if (!m) qFatal("%s", m.error().str().c_str());
    return m.value();
}

void write(const QString& path, const std::string& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    std::ofstream(path.toStdString()) << text;
}

// A tiny Llama: hidden 64, 2 layers, 4 heads x 16, 2 KV heads, FFN 128, vocab 1000, untied, bf16.
const char* kTinyLlama = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 128,
  "vocab_size": 1000, "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";
} // namespace

class TestHfImport : public QObject {
    Q_OBJECT
private slots:
    // Llama 4 (transformers' Llama4TextConfig): Maverick has interleave_moe_layer_step 2, so MoE layers are
    // 1, 3, ... 47: 24 of 48; Scout's step 1 makes all 48 MoE. NoPE every 4th layer (3, 7, ...): 12 layers of
    // full attention; the other 36 attend in chunks of attention_chunk_size 8192.
    void llama4Layers() {
        const Model mav = load("llama-4-maverick.config.json");
        QCOMPARE(mav.moeLayers(), int64_t(24));
        QVERIFY(!mav.isMoeLayer(0));
        QVERIFY(mav.isMoeLayer(1));
        QVERIFY(mav.isMoeLayer(47));
        QCOMPARE(mav.ffn, int64_t(16384));          // intermediate_size_mlp: the dense layers
        QCOMPARE(mav.moe.expertFfn, int64_t(8192)); // intermediate_size: experts and the shared expert
        QCOMPARE(mav.moe.sharedExperts, int64_t(1));
        QCOMPARE(load("llama-4-scout.config.json").moeLayers(), int64_t(48));
        QCOMPARE(mav.nopeLayers.size(), size_t(12));
        QCOMPARE(mav.layersOf(LayerAttention::Chunked), int64_t(36));
        const auto specs = layerSpecs(mav);
        QVERIFY(specs[3].attention == LayerAttention::Full && !specs[3].rope);
        QCOMPARE(specs[0].window, int64_t(8192));
        QCOMPARE(attendedTokens(mav, specs[0], 100000), 8192.0);
        QCOMPARE(attendedTokens(mav, specs[3], 100000), 100000.0);
    }

    // gpt-oss-120b: layer_types alternate sliding (window 128) and full; 8 KV heads x 64 in bf16 = 2,048
    // bytes per token per layer. At 100,000 tokens: 18 full layers x 100,000 x 2,048 + 18 sliding layers x
    // 128 x 2,048.
    void slidingWindowCapsKv() {
        const Model m = load("gpt-oss-120b.config.json");
        QCOMPARE(m.layersOf(LayerAttention::Sliding), int64_t(18));
        QCOMPARE(m.attention.slidingWindow, int64_t(128));
        QVERIFY(m.attention.sinks);
        QCOMPARE(kvBytesPerSequence(m, 100000), 18.0 * 100000 * 2048 + 18.0 * 128 * 2048);
        // Past the window only the full layers grow.
        QCOMPARE(kvBytesPerSequence(m, 2000) - kvBytesPerSequence(m, 1000), 18.0 * 1000 * 2048);
        // Mistral-7B-v0.1: every layer slides over 4,096 tokens.
        const Model mistral = load("mistral-7b-v0.1.config.json");
        QCOMPARE(kvBytesPerSequence(mistral, 32768), kvBytesPerSequence(mistral, 4096));
    }

    // Qwen3-Next: 36 Gated DeltaNet layers (3 of every 4) hold a constant state: 32 value heads x 128 x 128,
    // plus the convolution's last 3 inputs over 2 x 16 x 128 + 32 x 128 channels, in bf16 = (524,288 +
    // 24,576) x 2 bytes. The 12 full layers keep 2 KV heads x 256 x 2 (K and V) x 2 bytes = 2,048 bytes per
    // token.
    void linearAttentionHoldsState() {
        const Model m = load("qwen3-next-80b-a3b.config.json");
        QCOMPARE(m.layersOf(LayerAttention::Linear), int64_t(36));
        QVERIFY(m.layerAttention(3) == LayerAttention::Full);
        QCOMPARE(linearStateBytesPerLayer(m), (524288.0 + 24576.0) * 2.0);
        QCOMPARE(kvBytesPerSequence(m, 0), 36.0 * 1097728.0);
        QCOMPARE(kvBytesPerSequence(m, 1000), 36.0 * 1097728.0 + 12.0 * 1000 * 2048);
        QCOMPARE(attendedTokens(m, layerSpecs(m)[0], 5000), 0.0);
        QVERIFY(m.attention.outputGate);
        QCOMPARE(m.attention.rotaryFraction, 0.25);
    }

    // DeepSeek-V3.2: the indexer keeps index_topk = 2048 tokens, so attention reads stop growing past 2048;
    // the cache keeps every token's latent (512 + 64) plus the indexer key (128), bf16 here.
    void sparseAttentionIndexer() {
        const Model m = load("deepseek-v3.2-exp.config.json");
        QCOMPARE(m.attention.indexer.topK, int64_t(2048));
        QCOMPARE(m.attention.indexer.heads, int64_t(64));
        const auto l = layerSpecs(m)[10];
        QCOMPARE(attendedTokens(m, l, 100000), 2048.0);
        QCOMPARE(attendedTokens(m, l, 1000), 1000.0);
        const double perToken = (512 + 64 + 128) * bytesOf(m.kvCache);
        QCOMPARE(kvBytesPerSequence(m, 1000), 61.0 * 1000 * perToken);
    }

    // GLM-4.5: first_k_dense_replace 3 of 92 layers; one shared expert; partial_rotary_factor 0.5; q/k norms.
    // MiniMax-M2: q/k norms over all heads; rotary_dim 64 of 128; FP8 128x128 blocks.
    void glmAndMinimax() {
        const Model glm = load("glm-4.5.config.json");
        QCOMPARE(glm.moeLayers(), int64_t(89));
        QCOMPARE(glm.moe.sharedExperts, int64_t(1));
        QCOMPARE(glm.attention.rotaryFraction, 0.5);
        QVERIFY(glm.attention.qkNorm == QkNorm::PerHead);
        QCOMPARE(glm.mtpLayers, int64_t(1));
        const Model mm = load("minimax-m2.config.json");
        QVERIFY(mm.attention.qkNorm == QkNorm::PerLayer);
        QCOMPARE(mm.attention.rotaryFraction, 0.5);
        QVERIFY(mm.quant.method == QuantMethod::Fp8);
        QCOMPARE(mm.quant.blockSize, int64_t(128));
        QCOMPARE(mm.mtpLayers, int64_t(3));
    }

    // Qwen-MoE's decoder_sparse_step and mlp_only_layers: with step 2 over 8 layers, layers 1, 3, 5, 7 are
    // MoE; mlp_only_layers [3] makes layer 3 dense too: 3 MoE layers.
    void sparseStepAndMlpOnly() {
        const auto m = parseModel(R"({"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 64,
            "num_hidden_layers": 8, "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 100,
            "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 2,
            "mlp_only_layers": [3]})",
                                  "qwen.config.json");
        QVERIFY2(m.ok(), m.error().str().c_str());
        QCOMPARE(m->moeLayers(), int64_t(3));
        QVERIFY(m->isMoeLayer(1) && !m->isMoeLayer(2) && !m->isMoeLayer(3) && m->isMoeLayer(5));
        QCOMPARE(m->ffn, int64_t(256)); // the dense layers keep intermediate_size
        auto again = parseModel(toYaml(m.value()), "saved.yaml");
        QVERIFY2(again.ok(), again.error().str().c_str());
        QVERIFY(again.value() == m.value());
    }

    // The tiny Llama quantized by ModelOpt to NVFP4 (hf_quant_config.json beside config.json). By hand: per
    // layer q 64x64 + k 64x32 + v 64x32 + o 64x64 = 12,288 and FFN 3 x 64 x 128 = 24,576; both layers: 73,728
    // quantized values at 4 bits + one FP8 scale per 16 = 0.5625 bytes: 41,472 bytes; 14 matrices x (FP32
    // global scale + FP32 input scale) = 112 bytes. In bf16: embedding and head 2 x 64,000, norms 2 x 2 x 64
    // + 64: 128,320 values, 256,640 bytes. Total 298,224 bytes.
    void nvfp4WeightBytes() {
        QTemporaryDir dir;
        write(dir.filePath("config.json"), kTinyLlama);
        write(dir.filePath("hf_quant_config.json"), R"({"producer": {"name": "modelopt", "version": "0.29.0"},
            "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": null, "group_size": 16,
            "exclude_modules": ["lm_head"]}})");
        auto m = loadModel(dir.filePath("config.json").toStdString());
        QVERIFY2(m.ok(), m.error().str().c_str());
        QVERIFY(m->quant.method == QuantMethod::Nvfp4);
        QVERIFY(m->weights == Dtype::FP4);
        QCOMPARE(weightBytesPerParam(m.value(), ParamGroup::Attention), 0.5625);
        QCOMPARE(weightBytesPerParam(m.value(), ParamGroup::Embedding), 2.0);
        QCOMPARE(weightBytes(m.value(), ParamGroup::Attention), 2 * 12288 * 0.5625 + 8 * 8.0);
        QCOMPARE(weightBytes(m.value()), 298224.0);
        // The same in a model file round-trips.
        auto again = parseModel(toYaml(m.value()), "saved.yaml");
        QVERIFY2(again.ok(), again.error().str().c_str());
        QCOMPARE(weightBytes(again.value()), 298224.0);
    }

    // gpt-oss-120b's checkpoint: MXFP4 experts (4 bits + an E8M0 scale per 32), the rest bf16. The model card
    // (Table 1) gives 60.8 GiB for the checkpoint; biases, left out of our counts, are 0.04%.
    void mxfp4Checkpoint() {
        const Model m = load("gpt-oss-120b.config.json");
        QVERIFY(m.quant.method == QuantMethod::Mxfp4);
        QVERIFY(m.quant.quantized[int(ParamGroup::Experts)]);
        QVERIFY(!m.quant.quantized[int(ParamGroup::Attention)]); // modules_to_not_convert: self_attn
        QCOMPARE(weightBytesPerParam(m, ParamGroup::Experts), 0.5 + 1.0 / 32);
        const double gib = weightBytes(m) / double(1ull << 30);
        QVERIFY2(std::abs(gib - 60.8) / 60.8 < 0.01, qPrintable(QString::number(gib)));
    }

    // FP8 with 128x128 blocks (DeepSeek-V3): 1 byte + a 4-byte scale per 16,384 values; compressed-tensors
    // w4a16 with groups of 128: half a byte + a 2-byte scale per 128; w8a8: 1 byte + a 2-byte scale per row
    // of hidden.
    void otherFormats() {
        QCOMPARE(weightBytesPerParam(load("deepseek-v3.config.json"), ParamGroup::Experts),
                 1.0 + 4.0 / 16384);
        auto cfg = [](const std::string& quant) {
            std::string t = kTinyLlama;
            t.insert(t.rfind('}'), ", \"quantization_config\": " + quant);
            return parseModel(t, "q.config.json");
        };
        auto w4 = cfg(R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups":
            {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
            "group_size": 128, "symmetric": true}}}, "ignore": ["lm_head"]})");
        QVERIFY2(w4.ok(), w4.error().str().c_str());
        QCOMPARE(weightBytesPerParam(w4.value(), ParamGroup::DenseFfn), 0.5 + 2.0 / 128);
        QVERIFY(w4->weights == Dtype::INT4);
        auto w8 = cfg(R"({"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets":
            ["Linear"], "weights": {"num_bits": 8, "type": "int", "strategy": "channel"}, "input_activations":
            {"num_bits": 8, "type": "int", "dynamic": true}}}})");
        QVERIFY2(w8.ok(), w8.error().str().c_str());
        QCOMPARE(weightBytesPerParam(w8.value(), ParamGroup::Attention), 1.0 + 2.0 / 64);
        auto bad = cfg(R"({"quant_method": "awq"})");
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().str().find("supported: fp8, mxfp4") != std::string::npos);
        // The "dtype" key (transformers 4.56+) as well as torch_dtype.
        std::string f16 = kTinyLlama;
        f16.replace(f16.find("\"torch_dtype\": \"bfloat16\""), 25, "\"dtype\": \"float16\"");
        auto half = parseModel(f16, "f16.config.json");
        QVERIFY2(half.ok(), half.error().str().c_str());
        QVERIFY(half->weights == Dtype::FP16);
    }

    // A Hub id resolves from a fake cache under HF_HOME (refs/main names the snapshot), in a model load and
    // in a scenario file; a missing one names the folders searched.
    void hubIdFromLocalCache() {
        QTemporaryDir home;
        const QString repo = home.filePath("hub/models--Qwen--Qwen3-8B");
        QDir().mkpath(repo + "/snapshots/0a1b2c");
        QVERIFY(QFile::copy(QString::fromStdString(kHf + "qwen3-8b.config.json"),
                            repo + "/snapshots/0a1b2c/config.json"));
        write(repo + "/refs/main", "0a1b2c\n");
        qputenv("HF_HOME", home.path().toUtf8());
        qputenv("HF_HUB_CACHE", "");
        auto m = loadModel("Qwen/Qwen3-8B");
        QVERIFY2(m.ok(), m.error().str().c_str());
        QCOMPARE(QString::fromStdString(m->hubId), QString("Qwen/Qwen3-8B"));
        QCOMPARE(QString::fromStdString(m->name), QString("Qwen/Qwen3-8B"));
        QCOMPARE(m->layers, int64_t(36));

        const QString scenario = home.filePath("s.yaml");
        write(scenario,
              "kind: scenario\nname: s\nmodel: Qwen/Qwen3-8B\ncluster: " SHARDPLAN_SAMPLES_DIR
              "/clusters/h100-1x8.yaml\nworkload: " SHARDPLAN_SAMPLES_DIR "/workloads/chat-serving.yaml\n");
        auto s = loadScenario(scenario.toStdString());
        QVERIFY2(s.ok(), s.error().str().c_str());
        QCOMPARE(QString::fromStdString(s->model.hubId), QString("Qwen/Qwen3-8B"));

        auto missing = loadModel("Qwen/Qwen3-9B");
        QVERIFY(!missing.ok());
        const QString msg = QString::fromStdString(missing.error().str());
        QVERIFY2(msg.contains(home.path() + "/hub/models--Qwen--Qwen3-9B/snapshots"), qPrintable(msg));
        qunsetenv("HF_HOME");
    }
};

QTEST_GUILESS_MAIN(TestHfImport)
#include "tst_hfimport.moc"
