// shim.cpp: see shim.h. Kept to what the trainer needs; each collective
// waits for its work, so errors (a peer gone, a timeout) surface as the
// returned message.
#include "shim.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#ifndef RAGEN_NO_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef RAGEN_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace {

struct Store {
  c10::intrusive_ptr<c10d::Store> store;
};

// Collective is the class ProcessGroupGloo and ProcessGroupNCCL derive
// from: ProcessGroup up to libtorch 1.13; from 2.0 they are Backends (a
// ProcessGroup dispatches to one per device type), with the same
// collectives. The shim holds the backend itself.
#if TORCH_VERSION_MAJOR >= 2
using Collective = c10d::Backend;
#else
using Collective = c10d::ProcessGroup;
#endif

struct Group {
  c10::intrusive_ptr<Collective> pg;
};

char *message(const std::string &s) {
  char *m = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(m, s.c_str(), s.size() + 1);
  return m;
}

// guard runs f, turning any exception into a message. c10::Error's what()
// carries a C++ backtrace; its short message is what a user needs.
template <typename F>
char *guard(F f) {
  try {
    f();
    return nullptr;
  } catch (const c10::Error &e) {
    return message(e.what_without_backtrace());
  } catch (const std::exception &e) {
    return message(e.what());
  } catch (...) {
    return message("unknown C++ exception");
  }
}

void wait(const c10::intrusive_ptr<c10d::Work> &w) {
  if (!w->wait()) {
    throw std::runtime_error("collective did not complete");
  }
}

c10d::ReduceOp reduceOp(int op) {
  switch (op) {
    case 0: return c10d::ReduceOp::SUM;
    case 1: return c10d::ReduceOp::MAX;
    case 2: return c10d::ReduceOp::MIN;
    case 3: return c10d::ReduceOp::PRODUCT;
  }
  throw std::invalid_argument("unknown reduce op " + std::to_string(op));
}

torch::Tensor &tensor(void *t) { return *static_cast<torch::Tensor *>(t); }

}  // namespace

extern "C" {

char *rg_store_new(const char *host, int port, int world, int is_server, int64_t timeout_ms, rg_store *out) {
  return guard([&] {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(port);
    o.isServer = is_server != 0;
    o.numWorkers = world;
    o.waitWorkers = true;
    o.timeout = std::chrono::milliseconds(timeout_ms);
    auto s = c10::make_intrusive<c10d::TCPStore>(std::string(host), o);
    *out = new Store{s};
  });
}

char *rg_store_set(rg_store s, const char *key, const void *data, size_t n) {
  return guard([&] {
    const auto *p = static_cast<const uint8_t *>(data);
    static_cast<Store *>(s)->store->set(key, std::vector<uint8_t>(p, p + n));
  });
}

char *rg_store_get(rg_store s, const char *key, void **data, size_t *n) {
  return guard([&] {
    auto v = static_cast<Store *>(s)->store->get(key);
    *n = v.size();
    *data = std::malloc(v.size() ? v.size() : 1);
    std::memcpy(*data, v.data(), v.size());
  });
}

void rg_store_free(rg_store s) { delete static_cast<Store *>(s); }

int rg_has_gloo(void) {
#ifdef RAGEN_NO_GLOO
  return 0;
#else
  return 1;
#endif
}

int rg_has_nccl(void) {
#ifdef RAGEN_NCCL
  return 1;
#else
  return 0;
#endif
}

char *rg_group_new(rg_store s, int backend, int rank, int world, int64_t timeout_ms, rg_group *out) {
  return guard([&] {
    auto store = c10::make_intrusive<c10d::PrefixStore>("ragen/pg", static_cast<Store *>(s)->store);
    auto timeout = std::chrono::milliseconds(timeout_ms);
    if (backend == 1) {
#ifdef RAGEN_NCCL
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = timeout;
      *out = new Group{c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world, o)};
      return;
#else
      throw std::runtime_error("this build has no NCCL: it was prepared for a CPU libtorch");
#endif
    }
#ifndef RAGEN_NO_GLOO
    auto o = c10d::ProcessGroupGloo::Options::create(timeout);
    o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    o->threads = 2;
    *out = new Group{c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, o)};
#else
    throw std::runtime_error("this build has no Gloo: the libtorch it was prepared for ships no gloo headers of its own, and another gloo's would not match the one inside it (PyPI's torch ships none; Debian's libtorch-dev has them in libgloo-dev: apt-get install libgloo-dev, then make deps)");
#endif
  });
}

void rg_group_free(rg_group g) { delete static_cast<Group *>(g); }

char *rg_allreduce(rg_group g, void *t, int op) {
  return guard([&] {
    std::vector<at::Tensor> ts{tensor(t)};
    c10d::AllreduceOptions o;
    o.reduceOp = reduceOp(op);
    wait(static_cast<Group *>(g)->pg->allreduce(ts, o));
  });
}

char *rg_allreduce_grads(rg_group g, void **params, int n, int64_t bucket_bytes) {
  return guard([&] {
    auto &pg = static_cast<Group *>(g)->pg;
    // Gradients in parameter order, grouped into buckets of one dtype and
    // device: each bucket is flattened, summed in one collective and copied
    // back, as DDP's reducer does (without its overlap with backward).
    std::vector<at::Tensor> grads;
    for (int i = 0; i < n; i++) {
      auto &p = tensor(params[i]);
      if (!p.mutable_grad().defined()) {
        p.mutable_grad() = torch::zeros_like(p);
      }
      grads.push_back(p.mutable_grad());
    }
    size_t i = 0;
    while (i < grads.size()) {
      std::vector<at::Tensor> bucket{grads[i]};
      int64_t bytes = grads[i].numel() * grads[i].element_size();
      size_t j = i + 1;
      for (; j < grads.size(); j++) {
        int64_t b = grads[j].numel() * grads[j].element_size();
        if (bytes + b > bucket_bytes || grads[j].scalar_type() != grads[i].scalar_type() || grads[j].device() != grads[i].device()) {
          break;
        }
        bucket.push_back(grads[j]);
        bytes += b;
      }
      std::vector<at::Tensor> flat;
      for (auto &t : bucket) flat.push_back(t.reshape({-1}));
      std::vector<at::Tensor> buf{torch::cat(flat)};
      wait(pg->allreduce(buf));
      int64_t off = 0;
      for (auto &t : bucket) {
        t.copy_(buf[0].narrow(0, off, t.numel()).view_as(t));
        off += t.numel();
      }
      i = j;
    }
  });
}

char *rg_broadcast(rg_group g, void **tensors, int n, int root) {
  return guard([&] {
    c10d::BroadcastOptions o;
    o.rootRank = root;
    for (int i = 0; i < n; i++) {
      // detach: parameters require grad, and the copy is not a step
      // autograd should see (it shares the storage, so the write lands).
      std::vector<at::Tensor> ts{tensor(tensors[i]).detach()};
      wait(static_cast<Group *>(g)->pg->broadcast(ts, o));
    }
  });
}

char *rg_allgather(rg_group g, void *in, void *out) {
  return guard([&] {
    auto &pg = static_cast<Group *>(g)->pg;
    auto &o = tensor(out);
    TORCH_CHECK(o.is_contiguous() && o.dim() >= 1 && o.size(0) == pg->getSize(), "allgather output must be contiguous with first dimension ", pg->getSize());
    std::vector<at::Tensor> parts;
    for (int64_t r = 0; r < o.size(0); r++) parts.push_back(o.select(0, r));
    std::vector<std::vector<at::Tensor>> outs{parts};
    std::vector<at::Tensor> ins{tensor(in)};
    wait(pg->allgather(outs, ins));
  });
}

char *rg_barrier(rg_group g) {
  return guard([&] { wait(static_cast<Group *>(g)->pg->barrier()); });
}

}  // extern "C"
