// Thin N-API binding over Debian's libpocketsphinx 0.8+5prealpha.
//
// One Decoder wraps one ps_decoder_t. It is synchronous on purpose: the TypeScript side runs each decoder
// inside its own worker thread, so blocking calls here never touch the main event loop. Everything that is
// policy (which segments are words, how frames become milliseconds, when an utterance ends) lives in
// TypeScript; this file only moves data across the boundary.
#include <napi.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include <pocketsphinx.h>
#include <sphinxbase/cmd_ln.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/logmath.h>
#include <sphinxbase/ngram_model.h>
}

namespace {

// sphinxbase logs through one process-wide callback. We install it once and keep the last warnings and
// errors per thread, so a failing ps_init can report *why* (missing file, bad format) in its exception
// instead of printing to stderr. Each decoder lives on exactly one thread, so thread_local is enough.
thread_local std::string tls_log;
std::once_flag log_once;

void LogCallback(void * /*user_data*/, err_lvl_t level, const char *fmt, ...) {
  if (level < ERR_WARN) return;  // INFO/DEBUG chatter is dropped
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (tls_log.size() > 4096) tls_log.erase(0, tls_log.size() - 2048);
  tls_log += buf;
  if (tls_log.empty() || tls_log.back() != '\n') tls_log += '\n';
}

void InstallLogger() {
  std::call_once(log_once, [] {
    err_set_logfp(nullptr);  // also silences the configuration dump cmd_ln prints to the log stream
    err_set_callback(LogCallback, nullptr);
  });
}

std::string TakeLog() {
  std::string out;
  out.swap(tls_log);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

class Decoder : public Napi::ObjectWrap<Decoder> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "Decoder",
                       {
                           InstanceMethod("startStream", &Decoder::StartStream),
                           InstanceMethod("startUtt", &Decoder::StartUtt),
                           InstanceMethod("processRaw", &Decoder::ProcessRaw),
                           InstanceMethod("endUtt", &Decoder::EndUtt),
                           InstanceMethod("hypothesis", &Decoder::Hypothesis),
                           InstanceMethod("segments", &Decoder::Segments),
                           InstanceMethod("inSpeech", &Decoder::InSpeech),
                           InstanceMethod("frames", &Decoder::Frames),
                           InstanceMethod("resetCmn", &Decoder::ResetCmn),
                           InstanceMethod("setBias", &Decoder::SetBias),
                           InstanceMethod("biasKey", &Decoder::BiasKey),
                           InstanceMethod("dropBias", &Decoder::DropBias),
                           InstanceMethod("setMllr", &Decoder::SetMllr),
                           InstanceMethod("free", &Decoder::Free),
                       });
  }

  explicit Decoder(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Decoder>(info) {
    Napi::Env env = info.Env();
    InstallLogger();
    if (info.Length() < 1 || !info[0].IsObject()) {
      throw Napi::TypeError::New(env, "new Decoder(options): options object with hmm, lm, dict expected");
    }
    Napi::Object opts = info[0].As<Napi::Object>();
    // Arguments become a pocketsphinx command line: -hmm DIR -lm FILE -dict FILE plus any `args` pairs.
    std::vector<std::string> argv_s;
    for (const char *key : {"hmm", "lm", "dict"}) {
      Napi::Value v = opts.Get(key);
      if (v.IsUndefined() || v.IsNull()) continue;
      if (!v.IsString()) throw Napi::TypeError::New(env, std::string("Decoder option '") + key + "' must be a string");
      argv_s.push_back(std::string("-") + key);
      argv_s.push_back(v.As<Napi::String>().Utf8Value());
    }
    Napi::Value extra = opts.Get("args");
    if (extra.IsObject()) {
      Napi::Object e = extra.As<Napi::Object>();
      Napi::Array keys = e.GetPropertyNames();
      for (uint32_t i = 0; i < keys.Length(); i++) {
        std::string k = keys.Get(i).ToString().Utf8Value();
        std::string val = e.Get(k).ToString().Utf8Value();
        argv_s.push_back(k.rfind('-', 0) == 0 ? k : "-" + k);
        argv_s.push_back(val);
      }
    }
    std::vector<char *> argv;
    for (auto &s : argv_s) argv.push_back(const_cast<char *>(s.c_str()));

    TakeLog();
    config_ = cmd_ln_parse_r(nullptr, ps_args(), static_cast<int32>(argv.size()), argv.data(), TRUE);
    if (config_ == nullptr) {
      throw Napi::Error::New(env, "pocketsphinx: invalid decoder arguments: " + TakeLog());
    }
    ps_ = ps_init(config_);
    if (ps_ == nullptr) {
      cmd_ln_free_r(config_);
      config_ = nullptr;
      std::string log = TakeLog();
      throw Napi::Error::New(env, "pocketsphinx: decoder initialisation failed" + (log.empty() ? "" : ": " + log));
    }
    TakeLog();
    const char *search = ps_get_search(ps_);
    default_search_ = search != nullptr ? search : "";
    // Remember the initial live-CMN mean so a pooled decoder can start every session from the same state.
    feat_t *feat = ps_get_feat(ps_);
    if (feat != nullptr && feat->cmn_struct != nullptr) {
      initial_cmn_.resize(static_cast<size_t>(feat->cmn_struct->veclen));
      cmn_live_get(feat->cmn_struct, initial_cmn_.data());
    }
  }

  ~Decoder() override { Release(); }

 private:
  ps_decoder_t *ps_ = nullptr;
  cmd_ln_t *config_ = nullptr;
  std::vector<mfcc_t> initial_cmn_;
  std::string mllr_path_;
  std::vector<int16_t> scratch_;
  // The search the decoder was created with (the model's language model), and the key of the biased search kept
  // beside it ("" when none was built yet).
  std::string default_search_;
  // Biased searches kept for their next segments, least recently used first out (setBias's `keep`, default 1). Each
  // holds a lexicon tree over the whole vocabulary, about 40 MB with Debian's en-us model; several let requests that
  // take turns on one batch decoder keep theirs.
  struct BiasSearch {
    std::string key;
    std::string name;
    uint64_t used;
  };
  std::vector<BiasSearch> bias_searches_;
  const BiasSearch *active_bias_ = nullptr;
  uint64_t bias_tick_ = 0;
  uint64_t bias_names_ = 0;

  void UseDefaultSearch(Napi::Env env) {
    if (active_bias_ != nullptr) Check(env, ps_set_search(Ps(env), default_search_.c_str()), "ps_set_search");
    active_bias_ = nullptr;
  }

  void DropBiasSearches(Napi::Env env) {
    UseDefaultSearch(env);
    for (auto &b : bias_searches_) ps_unset_search(Ps(env), b.name.c_str());
    bias_searches_.clear();
  }

  void Release() {
    if (ps_ != nullptr) ps_free(ps_);
    if (config_ != nullptr) cmd_ln_free_r(config_);
    ps_ = nullptr;
    config_ = nullptr;
  }

  ps_decoder_t *Ps(Napi::Env env) {
    if (ps_ == nullptr) throw Napi::Error::New(env, "pocketsphinx: decoder was freed");
    return ps_;
  }

  void Check(Napi::Env env, int rv, const char *what) {
    if (rv < 0) {
      std::string log = TakeLog();
      throw Napi::Error::New(env, std::string("pocketsphinx: ") + what + " failed" + (log.empty() ? "" : ": " + log));
    }
  }

  // Start of an unrelated stream: resets the noise-removal statistics of the front end (spectral subtraction,
  // `-remove_noise yes`, otherwise carried from one utterance to the next) and the stream's frame counter.
  Napi::Value StartStream(const Napi::CallbackInfo &info) {
    Check(info.Env(), ps_start_stream(Ps(info.Env())), "ps_start_stream");
    return info.Env().Undefined();
  }

  Napi::Value StartUtt(const Napi::CallbackInfo &info) {
    Check(info.Env(), ps_start_utt(Ps(info.Env())), "ps_start_utt");
    return info.Env().Undefined();
  }

  // processRaw(samples: Int16Array | Buffer, { noSearch?, fullUtt? }) → frames searched
  Napi::Value ProcessRaw(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ps_decoder_t *ps = Ps(env);
    if (info.Length() < 1 || !info[0].IsTypedArray()) {
      throw Napi::TypeError::New(env, "processRaw: Int16Array or Buffer of s16le samples expected");
    }
    Napi::TypedArray ta = info[0].As<Napi::TypedArray>();
    const uint8_t *bytes = static_cast<const uint8_t *>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    size_t nbytes = ta.ByteLength();
    if (nbytes % 2 != 0) throw Napi::RangeError::New(env, "processRaw: odd byte length, s16le samples expected");
    size_t nsamples = nbytes / 2;
    const int16_t *samples = reinterpret_cast<const int16_t *>(bytes);
    // Buffers sliced from Node's pool can start at an odd address; copy those to an aligned scratch area.
    if (reinterpret_cast<uintptr_t>(bytes) % alignof(int16_t) != 0) {
      scratch_.resize(nsamples);
      std::memcpy(scratch_.data(), bytes, nbytes);
      samples = scratch_.data();
    }
    bool no_search = false, full_utt = false;
    if (info.Length() > 1 && info[1].IsObject()) {
      Napi::Object o = info[1].As<Napi::Object>();
      no_search = o.Get("noSearch").ToBoolean().Value();
      full_utt = o.Get("fullUtt").ToBoolean().Value();
    }
    int rv = ps_process_raw(ps, samples, nsamples, no_search ? 1 : 0, full_utt ? 1 : 0);
    Check(env, rv, "ps_process_raw");
    return Napi::Number::New(env, rv);
  }

  Napi::Value EndUtt(const Napi::CallbackInfo &info) {
    Check(info.Env(), ps_end_utt(Ps(info.Env())), "ps_end_utt");
    return info.Env().Undefined();
  }

  // hypothesis() → { text, score } | null
  Napi::Value Hypothesis(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    int32 score = 0;
    const char *hyp = ps_get_hyp(Ps(env), &score);
    if (hyp == nullptr) return env.Null();
    Napi::Object o = Napi::Object::New(env);
    o.Set("text", Napi::String::New(env, hyp));
    o.Set("score", Napi::Number::New(env, score));
    return o;
  }

  // segments() → [{ word, startFrame, endFrame, prob }], prob = posterior probability in [0, 1]
  // (1.0 for partial results, where pocketsphinx has no posterior).
  Napi::Value Segments(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ps_decoder_t *ps = Ps(env);
    logmath_t *lmath = ps_get_logmath(ps);
    Napi::Array out = Napi::Array::New(env);
    uint32_t i = 0;
    for (ps_seg_t *seg = ps_seg_iter(ps); seg != nullptr; seg = ps_seg_next(seg)) {
      int sf = 0, ef = 0;
      int32 ascr = 0, lscr = 0, lback = 0;
      ps_seg_frames(seg, &sf, &ef);
      int32 post = ps_seg_prob(seg, &ascr, &lscr, &lback);
      const char *word = ps_seg_word(seg);
      Napi::Object o = Napi::Object::New(env);
      o.Set("word", Napi::String::New(env, word != nullptr ? word : ""));
      o.Set("startFrame", Napi::Number::New(env, sf));
      o.Set("endFrame", Napi::Number::New(env, ef));
      o.Set("prob", Napi::Number::New(env, logmath_exp(lmath, post)));
      out.Set(i++, o);
    }
    return out;
  }

  Napi::Value InSpeech(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), ps_get_in_speech(Ps(info.Env())) != 0);
  }

  Napi::Value Frames(const Napi::CallbackInfo &info) {
    return Napi::Number::New(info.Env(), ps_get_n_frames(Ps(info.Env())));
  }

  // Restore the live cepstral-mean estimate captured at construction, so that results of one session do
  // not depend on what an earlier session on the same pooled decoder heard.
  Napi::Value ResetCmn(const Napi::CallbackInfo &info) {
    feat_t *feat = ps_get_feat(Ps(info.Env()));
    if (feat != nullptr && feat->cmn_struct != nullptr && !initial_cmn_.empty()) {
      cmn_live_set(feat->cmn_struct, initial_cmn_.data());
    }
    return info.Env().Undefined();
  }

  // setBias(null) → decode with the model's own language model again.
  // setBias({ key, words: [[word, phones], ...], lm: arpaPath, weight }) → decode with the model's language model
  // interpolated with the small ARPA model at `lm` (weight = its share, 0..1), after adding the words the dictionary
  // lacks. The biased search is built once per key and kept: a later call with the same key only switches to it.
  // Words are added to the dictionary without rebuilding the default search, whose lexicon tree is fixed when the
  // decoder is created, so decoding without a bias never sees them.
  Napi::Value SetBias(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ps_decoder_t *ps = Ps(env);
    if (info.Length() < 1 || info[0].IsNull() || info[0].IsUndefined()) {
      UseDefaultSearch(env);
      return env.Undefined();
    }
    if (!info[0].IsObject()) throw Napi::TypeError::New(env, "setBias: { key, words, lm, weight } or null expected");
    Napi::Object o = info[0].As<Napi::Object>();
    std::string key = o.Get("key").ToString().Utf8Value();
    for (auto &b : bias_searches_) {
      if (b.key != key) continue;
      if (active_bias_ != &b) Check(env, ps_set_search(ps, b.name.c_str()), "ps_set_search");
      active_bias_ = &b;
      b.used = ++bias_tick_;
      return env.Undefined();
    }
    std::string lm_path = o.Get("lm").ToString().Utf8Value();
    double weight = o.Get("weight").ToNumber().DoubleValue();
    Napi::Value keep_v = o.Get("keep");
    size_t keep = keep_v.IsNumber() ? static_cast<size_t>(std::max(1.0, keep_v.ToNumber().DoubleValue())) : 1;
    if (!(weight > 0 && weight < 1)) throw Napi::RangeError::New(env, "setBias: weight must be between 0 and 1");
    TakeLog();
    // Back to the model's own search before the cached ones change (the vector below may move or drop them).
    UseDefaultSearch(env);
    // Words the dictionary lacks. ps_add_word also adds each word to the language model of every n-gram search, and
    // a word added to the model's own (trie) language model crashes its scoring once the word is a history: so the
    // biased searches (which hold that model) are dropped and the default search is taken down while words are
    // added, then rebuilt over the same, untouched model. Decoding without a bias never sees the added words.
    std::vector<std::pair<std::string, std::string>> missing;
    Napi::Value words_v = o.Get("words");
    if (words_v.IsArray()) {
      Napi::Array words = words_v.As<Napi::Array>();
      for (uint32_t i = 0; i < words.Length(); i++) {
        Napi::Value pair_v = words.Get(i);
        if (!pair_v.IsArray()) continue;
        Napi::Array pair = pair_v.As<Napi::Array>();
        std::string word = pair.Get(0u).ToString().Utf8Value();
        char *known = ps_lookup_word(ps, word.c_str());
        if (known != nullptr) {
          free(known);
          continue;
        }
        missing.emplace_back(word, pair.Get(1u).ToString().Utf8Value());
      }
    }
    if (!missing.empty()) {
      DropBiasSearches(env);
      ngram_model_t *own = ps_get_lm(ps, default_search_.c_str());
      if (own == nullptr) throw Napi::Error::New(env, "pocketsphinx: the decoder has no language model to bias");
      ngram_model_retain(own);
      ps_unset_search(ps, default_search_.c_str());
      for (auto &w : missing) {
        // A pronunciation with a phone the model lacks is refused; the word is then left out.
        if (ps_add_word(ps, w.first.c_str(), w.second.c_str(), FALSE) < 0) TakeLog();
      }
      int rv = ps_set_lm(ps, default_search_.c_str(), own);
      ngram_model_free(own);
      Check(env, rv, "ps_set_lm");
      Check(env, ps_set_search(ps, default_search_.c_str()), "ps_set_search");
    }
    while (bias_searches_.size() >= keep) {
      auto lru = bias_searches_.begin();
      for (auto it = bias_searches_.begin(); it != bias_searches_.end(); ++it)
        if (it->used < lru->used) lru = it;
      ps_unset_search(ps, lru->name.c_str());
      bias_searches_.erase(lru);
    }
    ngram_model_t *base = ps_get_lm(ps, default_search_.c_str());
    if (base == nullptr) throw Napi::Error::New(env, "pocketsphinx: the decoder has no language model to bias");
    logmath_t *lmath = ps_get_logmath(ps);
    ngram_model_t *context = ngram_model_read(config_, lm_path.c_str(), NGRAM_ARPA, lmath);
    if (context == nullptr) {
      std::string log = TakeLog();
      throw Napi::Error::New(env, "pocketsphinx: context language model not read" + (log.empty() ? "" : ": " + log));
    }
    ngram_model_t *models[2] = {ngram_model_retain(base), context};
    char base_name[] = "base";
    char context_name[] = "context";
    char *names[2] = {base_name, context_name};
    const float32 weights[2] = {static_cast<float32>(1.0 - weight), static_cast<float32>(weight)};
    ngram_model_t *set = ngram_model_set_init(config_, models, names, weights, 2);
    if (set == nullptr) {
      ngram_model_free(models[0]);
      ngram_model_free(context);
      std::string log = TakeLog();
      throw Napi::Error::New(env, "pocketsphinx: language model set not built" + (log.empty() ? "" : ": " + log));
    }
    std::string name = "parlance_bias_" + std::to_string(++bias_names_);
    int rv = ps_set_lm(ps, name.c_str(), set);
    ngram_model_free(set);  // the search holds its own reference
    Check(env, rv, "ps_set_lm");
    Check(env, ps_set_search(ps, name.c_str()), "ps_set_search");
    bias_searches_.push_back({key, name, ++bias_tick_});
    active_bias_ = &bias_searches_.back();
    TakeLog();
    return env.Undefined();
  }

  // dropBias(): back to the model's own search, and the biased searches kept are freed.
  // setMllr(path): adapt the acoustic model's means with the MLLR transform in `path` (sphinxtrain's mllr_solve
  // format). pocketsphinx re-reads the model's original means before applying a transform, so switching between
  // transforms (an identity one included) never compounds them. A no-op when `path` is already applied.
  Napi::Value SetMllr(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ps_decoder_t *ps = Ps(env);
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(env, "setMllr(path): path expected");
    std::string path = info[0].As<Napi::String>().Utf8Value();
    if (path == mllr_path_) return env.Undefined();
    TakeLog();
    ps_mllr_t *mllr = ps_mllr_read(path.c_str());
    if (mllr == nullptr) throw Napi::Error::New(env, "pocketsphinx: cannot read MLLR transform " + path + ": " + TakeLog());
    ps_update_mllr(ps, mllr);  // the decoder owns it from here and frees the one it replaces
    mllr_path_ = path;
    return env.Undefined();
  }

  Napi::Value DropBias(const Napi::CallbackInfo &info) {
    DropBiasSearches(info.Env());
    return info.Env().Undefined();
  }

  // biasKey() → key of the biased search in use, or null when decoding with the model's own language model.
  Napi::Value BiasKey(const Napi::CallbackInfo &info) {
    if (active_bias_ == nullptr) return info.Env().Null();
    return Napi::String::New(info.Env(), active_bias_->key);
  }

  Napi::Value Free(const Napi::CallbackInfo &info) {
    Release();
    return info.Env().Undefined();
  }
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Decoder", Decoder::Init(env));
  exports.Set("libraryVersion", Napi::String::New(env, "0.8+5prealpha"));
  return exports;
}

}  // namespace

NODE_API_MODULE(pocketsphinx, Init)
