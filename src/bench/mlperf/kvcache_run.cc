#include "bench/mlperf/kvcache_run.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <queue>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/result.h"
#include "bench/mlperf/sample_reader.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {

double KvTrialResult::StorageTokensPerSec() const {
  double s = 0;
  for (const auto& c : clients) s += c.StorageTokensPerSec();
  return s;
}
double KvTrialResult::WallTokensPerSec() const {
  double s = 0;
  for (const auto& c : clients) s += c.WallTokensPerSec();
  return s;
}
double KvTrialResult::ReadGiBps() const {
  double s = 0;
  for (const auto& c : clients) s += c.ReadGiBps();
  return s;
}
double KvTrialResult::WriteGiBps() const {
  double s = 0;
  for (const auto& c : clients) s += c.WriteGiBps();
  return s;
}
double KvTrialResult::ReadP95Ms() const {
  double m = 0;
  for (const auto& c : clients) m = std::max(m, c.ReadP95Ms());
  return m;
}
double KvTrialResult::WriteP95Ms() const {
  double m = 0;
  for (const auto& c : clients) m = std::max(m, c.WriteP95Ms());
  return m;
}
CacheReport KvTrialResult::Cache(CacheDropMode requested) const {
  CacheReport r;
  r.requested = std::string(CacheDropModeName(requested));
  uint64_t pages = 0, resident = 0;
  for (const auto& c : clients) {
    r.drops += static_cast<uint32_t>(c.stats.storage_reads);
    pages += c.stats.read_pages;
    resident += c.stats.read_pages_resident;
  }
  if (r.drops == 0) return CacheReport{};  // no storage read: not applicable
  r.done = requested == CacheDropMode::kNone ? "none" : "fadvise";
  r.files = r.files_checked = r.drops;
  r.resident = pages > 0 ? static_cast<double>(resident) / static_cast<double>(pages) : -1;
  if (r.done == "none") {
    r.AddWarning("entries were read without dropping their cache (--drop-caches none): reads may "
                 "come from memory");
  } else if (r.resident > kResidentLimit) {
    r.AddWarning(fmt::format("after fadvise(DONTNEED) {:.0f} % of the entries' pages were still in "
                             "memory before their reads (a FUSE passthrough file's cache belongs to "
                             "its backing file): storage reads came from memory",
                             r.resident * 100));
  }
  return r;
}

std::vector<uint32_t> KvTrialResult::ZeroEntryClients() const {
  std::vector<uint32_t> out;
  for (const auto& c : clients) {
    if (c.stats.storage_writes == 0) out.push_back(c.client);
  }
  return out;
}

namespace {

nlohmann::json KvClientToJson(const KvClientResult& c) {
  const KvStats& s = c.stats;
  return {{"client", c.client}, {"elapsed_s", c.elapsed_s}, {"requests", c.requests},
          {"tokens", c.tokens}, {"storage_latency_s", c.storage_latency_s},
          {"sw", s.storage_write_bytes}, {"sr", s.storage_read_bytes},
          {"nw", s.storage_writes}, {"nr", s.storage_reads}, {"mw", s.memory_write_bytes},
          {"mr", s.memory_read_bytes}, {"ev", s.evictions}, {"dm", s.demotions},
          {"miss", s.misses}, {"hit", s.hits}, {"entries", s.storage_entries},
          {"rp", s.read_pages}, {"rpr", s.read_pages_resident},
          {"wdev", ToJson(s.write_device_ns)}, {"rdev", ToJson(s.read_device_ns)}};
}

Result<KvClientResult> KvClientFromJson(const nlohmann::json& j) {
  KvClientResult c;
  c.client = j.at("client").get<uint32_t>();
  c.elapsed_s = j.at("elapsed_s").get<double>();
  c.requests = j.at("requests").get<uint64_t>();
  c.tokens = j.at("tokens").get<uint64_t>();
  c.storage_latency_s = j.at("storage_latency_s").get<double>();
  KvStats& s = c.stats;
  s.storage_write_bytes = j.at("sw").get<uint64_t>();
  s.storage_read_bytes = j.at("sr").get<uint64_t>();
  s.storage_writes = j.at("nw").get<uint64_t>();
  s.storage_reads = j.at("nr").get<uint64_t>();
  s.memory_write_bytes = j.at("mw").get<uint64_t>();
  s.memory_read_bytes = j.at("mr").get<uint64_t>();
  s.evictions = j.at("ev").get<uint64_t>();
  s.demotions = j.at("dm").get<uint64_t>();
  s.misses = j.at("miss").get<uint64_t>();
  s.hits = j.at("hit").get<uint64_t>();
  s.storage_entries = j.at("entries").get<uint64_t>();
  s.read_pages = j.value("rp", uint64_t{0});
  s.read_pages_resident = j.value("rpr", uint64_t{0});
  ASSIGN_OR_RETURN(s.write_device_ns, HistogramFromJson(j.at("wdev")));
  ASSIGN_OR_RETURN(s.read_device_ns, HistogramFromJson(j.at("rdev")));
  return c;
}

struct Request {
  int priority = 1;
  uint64_t seq = 0;
  uint32_t user = 0;
  uint64_t context = 0;
  uint64_t generation = 0;
  std::string key;
  std::vector<std::string> previous;  // earlier turns of the conversation
};

struct ByPriority {
  bool operator()(const Request& a, const Request& b) const {
    return a.priority != b.priority ? a.priority < b.priority : a.seq > b.seq;
  }
};

struct Conversation {
  uint64_t id = 0;
  uint32_t turns = 0;
  std::vector<std::string> keys;
  bool active = false;
};

class Client {
 public:
  Client(const KvRunSpec& spec, uint32_t client, uint32_t trial, std::atomic<uint64_t>* live)
      : spec_(spec), client_(client), trial_(trial), live_(live) {}

  Result<KvClientResult> Run() {
    KvCacheConfig cc;
    cc.dir = fmt::format("{}/rank_{}", spec_.cache_dir, client_);
    cc.gpu_bytes = static_cast<uint64_t>(spec_.option.gpu_gb * 1073741824.0);
    cc.cpu_bytes = static_cast<uint64_t>(spec_.option.cpu_gb * 1073741824.0);
    cc.storage_bytes = spec_.storage_bytes;
    cc.max_concurrent_allocs = spec_.option.max_concurrent_allocs;
    cc.bytes_per_token = spec_.model.BytesPerToken();
    cc.scale = spec_.scale;
    cc.transfer = spec_.transfer;
    cc.seed = spec_.seed;
    cc.drop_before_read = spec_.drop_before_read;
    KvCache cache(cc);
    RETURN_IF_ERROR(cache.Init());
    cache_ = &cache;
    Rng rng(Mix64(spec_.seed * 1000003 + client_ * 7919 + trial_));
    users_ = MakeUsers(spec_.option.users, rng);
    convs_.assign(users_.size(), Conversation{});
    const uint32_t workers = std::min<uint32_t>(std::max<uint32_t>(1, spec_.option.users), kMaxWorkers);
    // Each worker makes its engine (an engine belongs to the thread that
    // uses it, engine.h); one is made here to fail early.
    engine_options_ = spec_.engine;
    engine_options_.buffer_size = spec_.transfer;
    if (auto probe = MakeEngine(engine_options_); !probe.ok()) {
      cache.RemoveAll();
      return probe.status();
    }
    const uint64_t t0 = MonoNanos();
    deadline_ = t0 + static_cast<uint64_t>(spec_.option.duration_s * 1e9);
    std::thread gen([&] { Generate(rng); });
    std::vector<std::thread> pool;
    for (uint32_t idx = 0; idx < workers; ++idx) {
      pool.emplace_back([&, idx] { Work(idx); });
    }
    gen.join();
    for (auto& t : pool) t.join();
    KvClientResult r;
    r.client = client_;
    r.elapsed_s = static_cast<double>(MonoNanos() - t0) / 1e9;
    r.requests = requests_;
    r.tokens = tokens_;
    r.storage_latency_s = latency_s_;
    r.stats = cache.Stats();
    cache.RemoveAll();
    if (!error_.ok()) return error_;
    return r;
  }

 private:
  bool Stopping() {
    return MonoNanos() >= deadline_ || failed_.load(std::memory_order_relaxed) ||
           StopRequested();
  }

  // The open loop: every user's next arrival, earliest first.
  void Generate(Rng& rng) {
    using Arrival = std::pair<uint64_t, uint32_t>;  // time ns, user
    std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> next;
    uint64_t now = MonoNanos();
    for (const auto& u : users_) {
      next.push({now + static_cast<uint64_t>(u.think_s * UniformReal(rng, 0.8, 1.2) * 1e9), u.id});
    }
    uint64_t seq = 0;
    while (!next.empty()) {
      auto [when, uid] = next.top();
      next.pop();
      if (when >= deadline_) break;
      now = MonoNanos();
      if (when > now) SleepUnlessStopped(static_cast<double>(when - now) / 1e9);
      if (Stopping()) break;
      const UserProfile& u = users_[uid];
      Conversation& c = convs_[uid];
      if (c.active && (UniformReal(rng, 0, 1) >= kContinueConversation ||
                       c.turns >= kMaxTurnsPerConversation)) {
        c = Conversation{};
      }
      if (!c.active) {
        c.active = true;
        c.id = ++conv_ids_;
        c.turns = 0;
        c.keys.clear();
      }
      Request req;
      req.priority = u.priority;
      req.seq = ++seq;
      req.user = uid;
      req.context = UniformInt(rng, std::max<uint64_t>(1, u.context / 4), u.context);
      req.generation = UniformInt(rng, std::max<uint64_t>(1, u.generation / 4), u.generation);
      req.previous = c.keys;
      ++c.turns;
      req.key = fmt::format("u{}_c{}_t{}", uid, c.id, c.turns);
      c.keys.push_back(req.key);
      {
        std::lock_guard<std::mutex> lock(mu_);
        queue_.push(std::move(req));
      }
      cv_.notify_one();
      next.push({MonoNanos() + static_cast<uint64_t>(u.think_s * UniformReal(rng, 0.8, 1.2) * 1e9),
                 uid});
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      generating_ = false;
    }
    cv_.notify_all();
  }

  void Fail(const Status& st) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok()) error_ = st;
    failed_.store(true);
    generating_ = false;
    cv_.notify_all();
  }

  void Work(uint32_t worker) {
    auto made = MakeEngine(engine_options_);
    if (!made.ok()) return Fail(made.status());
    Engine& engine = **made;
    Rng rng(Mix64(spec_.seed * 0x9e3779b97f4a7c15ULL + client_ * 1000003ULL + worker));
    while (true) {
      Request req;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || !generating_; });
        if (queue_.empty() || Stopping()) return;
        req = queue_.top();
        queue_.pop();
      }
      Status st = Serve(req, engine, rng);
      if (!st.ok() && StopRequested()) return;  // an I/O the stop cut short
      if (!st.ok()) return Fail(st);
    }
  }

  // Serves one request. At the end of the duration a request still in
  // flight is abandoned between two accesses: its I/O stays in the byte
  // counts, its tokens and latency are not counted (so a trial ends within
  // one entry's I/O of --duration; docs/mlperf.md).
  Status Serve(const Request& req, Engine& engine, Rng& rng) {
    double latency = 0;
    uint64_t context = req.context;
    // 1. System-prompt prefix (never stored: a miss, as in the reference).
    if (UniformReal(rng, 0, 1) < kSystemPromptProbability) {
      static const uint64_t kPromptTokens[] = {5, 9, 6};
      uint64_t which = rng.Below(3);
      ASSIGN_OR_RETURN(KvAccess a, cache_->Read(fmt::format("kv_system_{}", which), engine));
      latency += a.seconds;
      context = context > kPromptTokens[which] ? context - kPromptTokens[which] : 0;
    }
    // 2. Every previous turn of the conversation.
    for (const auto& key : req.previous) {
      if (Stopping()) return Status::Ok();
      ASSIGN_OR_RETURN(KvAccess a, cache_->Read(key, engine));
      latency += a.seconds;
    }
    if (Stopping()) return Status::Ok();
    // 3. Prefill: write the context's KV entry.
    ASSIGN_OR_RETURN(KvAccess w, cache_->Allocate(req.key, std::max<uint64_t>(1, context), engine));
    latency += w.seconds;
    // 4. Decode (not for prefill-only long contexts).
    if (req.context < kPrefillOnlyContext) {
      ASSIGN_OR_RETURN(KvAccess first, cache_->Read(req.key, engine));
      latency += first.seconds;
      if (first.tier == Tier::kNone) {
        ASSIGN_OR_RETURN(KvAccess again, cache_->Allocate(req.key, std::max<uint64_t>(1, context), engine));
        latency += again.seconds;
      } else {
        uint64_t batches = std::max<uint64_t>(1, (req.generation + kDecodeBatch - 1) / kDecodeBatch);
        for (uint64_t b = 0; b < batches; ++b) {
          if (Stopping()) return Status::Ok();
          ASSIGN_OR_RETURN(KvAccess a, cache_->Read(req.key, engine));
          latency += a.seconds;
        }
      }
    }
    // 5. Token generation (a stop abandons the request, as the end of the
    // duration does between accesses).
    if (!SleepUnlessStopped(static_cast<double>(req.generation) *
                            SecondsPerToken(spec_.option.generation))) {
      return Status::Ok();
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++requests_;
    tokens_ += req.generation;
    latency_s_ += latency;
    if (live_) live_->fetch_add(req.generation, std::memory_order_relaxed);
    return Status::Ok();
  }

  const KvRunSpec& spec_;
  const uint32_t client_, trial_;
  std::atomic<uint64_t>* live_;
  KvCache* cache_ = nullptr;
  EngineOptions engine_options_;  // per worker engine
  std::vector<UserProfile> users_;
  std::vector<Conversation> convs_;  // owned by the generator thread
  uint64_t conv_ids_ = 0;
  uint64_t deadline_ = 0;
  std::atomic<bool> failed_{false};
  std::mutex mu_;  // guards queue_, generating_, the totals, error_
  std::condition_variable cv_;
  std::priority_queue<Request, std::vector<Request>, ByPriority> queue_;
  bool generating_ = true;
  uint64_t requests_ = 0, tokens_ = 0;
  double latency_s_ = 0;
  Status error_;
};

}  // namespace

Result<KvTrialResult> RunKvTrial(const KvRunSpec& spec, uint32_t trial, Comm& comm) {
  if (spec.clients % static_cast<uint32_t>(comm.size()) != 0) {
    return Status(StatusCode::kInvalidArgument, "--clients must be a multiple of the MPI processes");
  }
  const uint32_t local = spec.clients / static_cast<uint32_t>(comm.size());
  const uint32_t first = static_cast<uint32_t>(comm.rank()) * local;
  std::atomic<uint64_t> live{0};
  std::vector<Result<KvClientResult>> results(local, Status(StatusCode::kInternal, "not run"));
  CpuSample cpu0 = SampleCpu();
  comm.Barrier();
  {
    const uint64_t t0 = MonoNanos();
    Progress progress(spec.progress, fmt::format("kvcache option {}", spec.option.number), [&] {
      double el = static_cast<double>(MonoNanos() - t0) / 1e9;
      return ProgressSnapshot{0, live.load(std::memory_order_relaxed),
                              std::min(1.0, el / std::max(1e-3, spec.option.duration_s))};
    });
    std::vector<std::thread> threads;
    for (uint32_t idx = 0; idx < local; ++idx) {
      threads.emplace_back([&, idx] {
        Client c(spec, first + idx, trial, &live);
        results[idx] = c.Run();
      });
    }
    for (auto& t : threads) t.join();
  }
  KvTrialResult out;
  out.cpu = CpuBetween(cpu0, SampleCpu());
  out.peak_rss = PeakRssBytes();
  out.stopped_early = comm.AnyFailed(StopRequested());
  Status failed;
  for (auto& r : results) {
    if (!r.ok() && failed.ok()) failed = r.status();
  }
  if (comm.AnyFailed(!failed.ok())) {
    return failed.ok() ? Status(StatusCode::kIoError, "another process failed") : failed;
  }
  nlohmann::json mine = nlohmann::json::array();
  for (auto& r : results) mine.push_back(KvClientToJson(*r));
  std::vector<std::string> all = comm.Gather(mine.dump());
  if (comm.rank() != 0) {
    for (auto& r : results) out.clients.push_back(*r);
    return out;
  }
  for (const auto& text : all) {
    for (const auto& j : nlohmann::json::parse(text)) {
      ASSIGN_OR_RETURN(KvClientResult c, KvClientFromJson(j));
      out.clients.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace t0fs::bench::mlperf
