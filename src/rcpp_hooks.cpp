// The one entry point of the test and benchmark hooks (rcpp_hooks.h):
// .hook(name, args) looks `name` up in a table and calls that glue function
// with args[[1]], args[[2]], ... converted to its parameter types exactly as
// a generated Rcpp export converts them (Rcpp::traits::input_parameter, so
// a matrix arrives as an Eigen::Map of R's memory, no copy), and wraps its
// result (NULL for a void function). Arguments are positional and all
// required. An unknown name or a wrong number of arguments is an error that
// lists what the table holds. Adding a hook: declare it in rcpp_hooks.h and
// add one line to hook_table().
#include "rcpp_hooks.h"

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace {

struct Hook {
  std::size_t arity;
  std::string params;  // the parameter names, for the error message
  std::function<SEXP(const Rcpp::List&)> call;
};

template <typename R, typename... A, std::size_t... I>
SEXP invoke(R (*f)(A...), const Rcpp::List& args, std::index_sequence<I...>) {
  // Each converter holds its SEXP, which `args` protects for the call.
  std::tuple<typename Rcpp::traits::input_parameter<A>::type...> in(static_cast<SEXP>(args[I])...);
  if constexpr (std::is_void<R>::value) {
    f(std::get<I>(in)...);
    return R_NilValue;
  } else {
    return Rcpp::wrap(f(std::get<I>(in)...));
  }
}

template <typename R, typename... A>
Hook hook(R (*f)(A...), std::string params) {
  return Hook{sizeof...(A), std::move(params), [f](const Rcpp::List& args) {
                return invoke(f, args, std::index_sequence_for<A...>{});
              }};
}

const std::map<std::string, Hook>& hook_table() {
  static const std::map<std::string, Hook> table{
      {"blas_threads_get", hook(blas_threads_get_cpp, "")},
      {"chol_blocked", hook(chol_blocked_cpp, "a, block")},
      {"chol_blocked_timing", hook(chol_blocked_timing_cpp, "a, what, blocked, reps, block")},
      {"chol_inverse", hook(chol_inverse_cpp, "a, backend")},
      {"chol_loo", hook(chol_loo_cpp, "a, r, backend, base_jitter")},
      {"chol_rank_one", hook(chol_rank_one_cpp, "a, v, sigma")},
      {"chol_timing", hook(chol_timing_cpp, "a, backend, full_inverse, reps")},
      {"gpc_ep_evidence_k",
       hook(gpc_ep_evidence_k_cpp, "k, y, site_tau, site_nu, epsilon, probit_scale, diagonal_only")},
      {"gpc_ep_gradient", hook(gpc_ep_gradient_cpp, "x, y, spec, epsilon, probit_scale, ep, seed")},
      {"gpc_ep_moments", hook(gpc_ep_moments_cpp, "y, cav_mean, cav_var, epsilon, probit_scale")},
      {"gpc_ep_run_k", hook(gpc_ep_run_k_cpp, "k, y, epsilon, probit_scale, ep, seed")},
      {"gpc_ep_sparse_run",
       hook(gpc_ep_sparse_run_cpp, "x, z, y, spec, epsilon, probit_scale, ep, seed, gradient")},
      {"gpr_loo_eval", hook(gpr_loo_eval_cpp, "x, y, spec, sigma, options")},
      {"gpr_loo_nll_grad", hook(gpr_loo_nll_grad_cpp, "x, y, spec, sigma, options, reps")},
      {"gpr_loo_sweeps", hook(gpr_loo_sweeps_cpp, "x, y, spec, sigma0, options, sweeps")},
      {"gpr_pursuit_objective",
       hook(gpr_pursuit_objective_cpp,
            "x, y, spec, z, support, convex, prior_mu, prior_sd, neighbors")},
      {"kernel_diag", hook(kernel_diag_cpp, "x, spec")},
      {"kernel_diag_gradient", hook(kernel_diag_gradient_cpp, "x, spec")},
      {"kernel_gradient", hook(kernel_gradient_cpp, "x, w, spec")},
      {"ld_elbo",
       hook(ld_elbo_cpp, "x, s, group_ptr, pair_unit, hyper, state, structured, vb_c, exact")},
      {"ld_update",
       hook(ld_update_cpp,
            "x, s, group_ptr, pair_unit, hyper, state, block, structured, vb_c, exact")},
      {"ld_w_objective", hook(ld_w_objective_cpp, "x, zeta, alpha_w, w")},
      {"minimize_box", hook(minimize_box_cpp, "fn, x0, lower, upper, max_iter")},
      {"monitor_demo",
       hook(monitor_demo_cpp, "progress, steps, stages, min_interval_ms, other_thread, stop_at")},
      {"monitor_poll", hook(monitor_poll_cpp, "")},
      {"sgd_floor_seconds", hook(sgd_floor_seconds_cpp, "data, repeats")},
      {"sgd_stream_seconds", hook(sgd_stream_seconds_cpp, "data, repeats")},
  };
  return table;
}

}  // namespace

// Calls the hook `name` with the positional arguments `args`. rng = false:
// no hook draws from R's generator, and an RNG scope around an R callback
// (minimize_box, monitor_demo) would restore a stale .Random.seed after it.
// [[Rcpp::export(.hook, rng = false)]]
SEXP hook_cpp(std::string name, Rcpp::List args) {
  const auto& table = hook_table();
  const auto it = table.find(name);
  if (it == table.end()) {
    std::string known;
    for (const auto& h : table) known += (known.empty() ? "" : ", ") + h.first;
    Rcpp::stop("unknown hook '" + name + "'; the hooks are: " + known);
  }
  const Hook& h = it->second;
  if (static_cast<std::size_t>(args.size()) != h.arity) {
    Rcpp::stop("hook '" + name + "' takes " + std::to_string(h.arity) + " argument" +
               (h.arity == 1 ? "" : "s") + " (" + h.params + "), not " +
               std::to_string(args.size()));
  }
  return h.call(args);
}
