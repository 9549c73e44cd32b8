// Learning a softmax classifier from noisy group label distributions
// (Yoshikawa 2017) by variational EM on the exact evidence lower bound (the
// paper's bound with its update equations corrected; vignette
// "label-dist-vb"), in the mean-field family q(y) q(t) and the structured
// family q(y_u) q(t_iu | y_u).
//
// The core is split by concern: label_dist_objective.cpp (problem checks,
// ELBO, W objective), label_dist_updates.cpp (coordinate updates),
// label_dist_fit.cpp (start, restarts, outer loop).
//
// Notation: U instances x_u (rows of x, U x D), N groups with
// observed noisy label distributions s_i (rows of s, N x M), P (group, member)
// pairs. Pairs are stored group by group: pairs group_ptr[i] .. group_ptr[i+1]-1
// belong to group i, pair k has member pair_unit[k].
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "common/monitor.h"

namespace noisylabels {

using Eigen::MatrixXd;
using Eigen::VectorXd;

struct LdProblem {
  Eigen::Map<const MatrixXd> x;  // U x D features
  Eigen::Map<const MatrixXd> s;  // N x M observed group label distributions
  int U, D, N, M, P;
  std::vector<int> group_ptr;   // N + 1 offsets into the pair arrays
  std::vector<int> pair_unit;   // P: member of each pair
  std::vector<int> pair_group;  // P: group of each pair
  std::vector<int> unit_ptr;    // U + 1 offsets into unit_pairs
  std::vector<int> unit_pairs;  // P: pairs of each instance, instance by instance

  // Validates the membership (indices in range, no empty group, no instance
  // twice in one group) and throws std::invalid_argument otherwise.
  LdProblem(const double* x_data, int U, int D, const double* s_data, int N, int M,
            std::vector<int> group_ptr, std::vector<int> pair_unit);
  int group_size(int i) const { return group_ptr[i + 1] - group_ptr[i]; }
};

struct LdHyper {
  double alpha_w = 1;   // precision of the Gaussian prior on each w_m
  double alpha_s = 10;  // precision of the Gaussian noise on s_i
  double alpha_c0 = 1;  // Dirichlet concentration off the diagonal of C
  double alpha_c1 = 10; // Dirichlet concentration on the diagonal of C
  double beta(int m, int l) const { return m == l ? alpha_c1 : alpha_c0; }
  // The M x M matrix of Dirichlet concentrations beta(m, l).
  MatrixXd beta_matrix(int M) const {
    MatrixXd b(M, M);
    for (int m = 0; m < M; ++m)
      for (int l = 0; l < M; ++l) b(m, l) = beta(m, l);
    return b;
  }
};

// Variational state. MF uses `eta` (P x M). The structured family stores the
// conditional rows eta_iu[m, .] in `eta_cond` (M*M x P; entry (m*M + l, q) for the
// pair k = unit_pairs[q]: columns in instance order, which is the order of the
// structured sweep, so its memory access is sequential) and
// their zeta-weighted marginals in `eta` (P x M), which is what the Gaussian
// term sees. `cpar` is C itself (MAP) or the Dirichlet parameters of q(C) (VB).
struct LdState {
  MatrixXd eta;       // P x M
  MatrixXd eta_cond;  // M*M x P, instance order (structured only)
  MatrixXd zeta;      // U x M
  MatrixXd w;         // M x D
  MatrixXd cpar;      // M x M
};

struct LdOptions {
  bool structured = false;
  bool vb_c = false;        // q(C) Dirichlet per row instead of the MAP C
  bool exact = true;        // false: plug-in ablation (MF only)
  int max_iter = 200;
  double tol = 1e-6;        // relative ELBO change
  int stable_iter = 10;     // stop when argmax zeta is stable this long (0 = off)
  double stable_tol = 1e-4; // "stable": at most stable_tol * U argmax changes
  int lbfgs_max_iter = 100;
  double init_lambda = 1e-2;  // ridge of the deconvolution start
  double init_diag = 0.7;     // diagonal of C at the start
  int restarts = 1;           // restart 0 = deconvolution; others perturb it
  double restart_mix = 0.5;   // weight of the random part of a perturbed start
  bool debug = false;         // ELBO after every block
  int threads = 1;
  std::uint64_t seed = 1;
};

// The exact ELBO, term by term (for the structured family the entropy of t
// and the confusion counts are zeta-weighted over the conditional rows).
struct LdElbo {
  double gauss = 0, confusion = 0, softmax = 0, entropy_y = 0, entropy_t = 0,
         prior_w = 0, prior_c = 0;
  double total() const {
    return gauss + confusion + softmax + entropy_y + entropy_t + prior_w + prior_c;
  }
};

// log C (MAP) or E_q[log C] (VB) from the state's cpar.
MatrixXd ld_log_c(const MatrixXd& cpar, bool vb_c);
// H (U x M): sum over the groups of u of the marginal eta.
MatrixXd ld_h(const LdProblem& prob, const MatrixXd& eta);
// Sufficient statistic N (M x M) of the confusion term.
MatrixXd ld_counts(const LdProblem& prob, const LdState& st, bool structured);

// exact = false: the paper's plug-in objective (variance term of (V) dropped;
// not a lower bound, kept as an ablation).
LdElbo ld_elbo(const LdProblem& prob, const LdHyper& hy, const LdState& st, bool structured,
               bool vb_c, bool exact = true);

// Coordinate updates; each is an exact maximiser of the ELBO over its block
// (W: improvement-only L-BFGS). They modify `st` in place.
void ld_update_c(const LdProblem& prob, const LdHyper& hy, LdState& st, bool structured,
                 bool vb_c);
// Returns the number of L-BFGS evaluations; the result is kept only if it
// raises the W objective.
int ld_update_w(const LdProblem& prob, const LdHyper& hy, LdState& st, int max_iter,
                Monitor& monitor);
// exact = false: maximise the plug-in block objective by the fixed point
// eta_l ~ exp(g_l - (alpha_s / n^2) eta_l) (no closed form).
void ld_update_eta(const LdProblem& prob, const LdHyper& hy, LdState& st, bool vb_c,
                   int threads, bool exact = true);
void ld_update_zeta(const LdProblem& prob, LdState& st, bool vb_c);
// Structured family: exact block update of (zeta_u, eta_iu for i containing u),
// instance by instance.
void ld_update_structured(const LdProblem& prob, const LdHyper& hy, LdState& st, bool vb_c,
                          Monitor& monitor);

// W objective l(W) = sum_u sum_m zeta_um log softmax(W x_u)_m - (alpha_w/2) ||W||^2
// and its gradient (M x D).
double ld_w_objective(const LdProblem& prob, const MatrixXd& zeta, double alpha_w,
                      const MatrixXd& w, MatrixXd* grad);

// Deconvolution estimate of each instance's expected noisy label (ridge
// least squares of the group distributions on the membership averages),
// clipped at 0.01 and renormalised (U x M).
// Polls `monitor` every conjugate-gradient iteration.
MatrixXd ld_deconvolve(const LdProblem& prob, double lambda, Monitor& monitor = null_monitor());

LdState ld_initial_state(const LdProblem& prob, const LdHyper& hy, const LdOptions& opt,
                         const MatrixXd& p_hat, int restart, std::uint64_t seed);

struct LdFit {
  LdState state;
  std::vector<double> elbo_trace;   // after every outer iteration (entry 0: start)
  std::vector<int> changes_trace;   // number of argmax-zeta changes per iteration
  std::vector<double> block_deltas; // debug: ELBO change of every block, in order
  std::vector<std::string> block_names;
  std::vector<double> restart_elbo; // final ELBO of each restart
  int best_restart = 0;
  int iterations = 0;
  bool converged = false;
  std::string stop_reason;
  LdElbo elbo;
  int lbfgs_evaluations = 0;
};

LdFit ld_fit(const LdProblem& prob, const LdHyper& hy, const LdOptions& opt, Monitor& monitor);

// Runs one restart from the given state (ld_fit calls it per restart).
LdFit ld_run(const LdProblem& prob, const LdHyper& hy, const LdOptions& opt, LdState state,
             Monitor& monitor);

}  // namespace noisylabels
