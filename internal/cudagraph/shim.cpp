// shim.cpp: see shim.h.
#include "shim.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <torch/version.h>

namespace {

char *message(const std::string &s) {
  char *m = static_cast<char *>(std::malloc(s.size() + 1));
  std::memcpy(m, s.c_str(), s.size() + 1);
  return m;
}

}  // namespace

#ifdef RAGEN_CUDA_GRAPHS

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <c10/util/Optional.h>

namespace {

struct Graph {
  int device;
  at::cuda::CUDAGraph graph;
  c10::cuda::CUDAStream side;
  c10::optional<c10::cuda::CUDAStream> previous;  // set between enter and leave
  Graph(int d, c10::cuda::CUDAStream s) : device(d), side(s) {}
};

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

Graph *G(rg_graph g) { return static_cast<Graph *>(g); }

}  // namespace

extern "C" {

int rg_graph_compiled(void) { return 1; }

char *rg_graph_new(int device, rg_graph *out) {
  return guard([&] {
    int n = c10::cuda::device_count();
    if (device < 0 || device >= n) {
      throw std::runtime_error("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) + " visible)");
    }
    c10::cuda::CUDAGuard on(static_cast<c10::DeviceIndex>(device));
    *out = new Graph(device, c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(device)));
  });
}

char *rg_graph_enter(rg_graph g) {
  return guard([&] {
    Graph *p = G(g);
    if (p->previous) throw std::runtime_error("the graph's side stream is already current");
    c10::cuda::device_synchronize();
    p->previous = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(p->device));
    c10::cuda::setCurrentCUDAStream(p->side);
  });
}

char *rg_graph_leave(rg_graph g) {
  return guard([&] {
    Graph *p = G(g);
    if (!p->previous) throw std::runtime_error("the graph's side stream is not current");
    c10::cuda::device_synchronize();
    c10::cuda::setCurrentCUDAStream(*p->previous);
    p->previous.reset();
  });
}

char *rg_graph_capture_begin(rg_graph g) {
  return guard([&] {
    if (!G(g)->previous) throw std::runtime_error("capture must run on the graph's side stream (enter first)");
    G(g)->graph.capture_begin();
  });
}

char *rg_graph_capture_end(rg_graph g) { return guard([&] { G(g)->graph.capture_end(); }); }
char *rg_graph_replay(rg_graph g) { return guard([&] { G(g)->graph.replay(); }); }
char *rg_graph_reset(rg_graph g) { return guard([&] { G(g)->graph.reset(); }); }

void rg_graph_free(rg_graph g) {
  try {
    delete G(g);
  } catch (...) {
  }
}

}  // extern "C"

#else  // no CUDA graphs in this build: every call says why

namespace {
char *unavailable() {
  return message(std::string("this build has no CUDA graphs (libtorch ") + TORCH_VERSION + ", compiled without RAGEN_CUDA_GRAPHS)");
}
}  // namespace

extern "C" {
int rg_graph_compiled(void) { return 0; }
char *rg_graph_new(int, rg_graph *out) {
  *out = nullptr;
  return unavailable();
}
char *rg_graph_enter(rg_graph) { return unavailable(); }
char *rg_graph_leave(rg_graph) { return unavailable(); }
char *rg_graph_capture_begin(rg_graph) { return unavailable(); }
char *rg_graph_capture_end(rg_graph) { return unavailable(); }
char *rg_graph_replay(rg_graph) { return unavailable(); }
char *rg_graph_reset(rg_graph) { return unavailable(); }
void rg_graph_free(rg_graph) {}
}  // extern "C"

#endif
