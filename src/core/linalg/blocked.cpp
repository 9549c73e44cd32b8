#include "linalg/blocked.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "linalg/blas.h"

namespace noisylabels {

namespace {

const double kOne = 1.0, kMinusOne = -1.0;

// Runs fn(start, length) over [0, total) in chunks of about kPollFlops of
// work each (`unit` flops per index), polling between chunks.
template <class Fn>
void in_chunks(int total, double unit, Monitor& monitor, Fn fn) {
  // Whole multiples of 64 rows/columns keep the BLAS kernels at full speed.
  const double per = unit > 0 ? std::floor(kPollFlops / unit / 64) * 64 : total;
  const int len = static_cast<int>(std::max(64.0, std::min(per, static_cast<double>(total))));
  for (int start = 0; start < total; start += len) {
    if (start > 0) monitor.check();
    fn(start, std::min(len, total - start));
  }
}

// The n x n matrix as BLAS sees it (leading dimension ld = n) and the
// block width.
struct Panel {
  Panel(Eigen::MatrixXd& a, int block)
      : data(a.data()), n(static_cast<int>(a.rows())), ld(n), nb(block > 0 ? block : kCholBlock) {}
  double* at(int i, int j) const { return data + i + static_cast<std::ptrdiff_t>(j) * ld; }
  double* data;
  int n, ld, nb;
};

}  // namespace

int blocked_potrf(Eigen::MatrixXd& a, Monitor& monitor, int block) {
  // Left-looking, as LAPACK's dpotrf("L"): block column j is brought up to
  // date with the columns left of it (dsyrk, dgemm), then factored (dpotrf
  // on the diagonal block, dtrsm below it).
  const Panel m(a, block);
  const int n = m.n, nb = m.nb, ld = m.ld;
  for (int j = 0; j < n; j += nb) {
    const int jb = std::min(nb, n - j);
    if (j > 0) dsyrk_("L", "N", &jb, &j, &kMinusOne, m.at(j, 0), &ld, &kOne, m.at(j, j), &ld, 1, 1);
    int info = 0;
    dpotrf_("L", &jb, m.at(j, j), &ld, &info, 1);
    if (info != 0) return j + info;
    const int rows = n - j - jb;
    if (rows > 0) {
      in_chunks(rows, 2.0 * jb * j + static_cast<double>(jb) * jb, monitor, [&](int r0, int len) {
        double* below = m.at(j + jb + r0, j);
        if (j > 0) {
          dgemm_("N", "T", &len, &jb, &j, &kMinusOne, m.at(j + jb + r0, 0), &ld, m.at(j, 0), &ld,
                 &kOne, below, &ld, 1, 1);
        }
        dtrsm_("R", "L", "T", "N", &len, &jb, &kOne, m.at(j, j), &ld, below, &ld, 1, 1, 1, 1);
      });
    }
    monitor.check();
  }
  return 0;
}

int blocked_trtri(Eigen::MatrixXd& a, Monitor& monitor, int block) {
  // LAPACK's dtrtri("L"), from the last block column backwards: with the
  // trailing block L22 already inverted, A21 := -L22^{-1} A21 L11^{-1}, then
  // L11 is inverted in place.
  const int n = static_cast<int>(a.rows());
  if (n == 0) return 0;
  for (int i = 0; i < n; ++i) {
    if (a(i, i) == 0.0) return i + 1;
  }
  const Panel m(a, block);
  const int nb = m.nb, ld = m.ld;
  for (int j = ((n - 1) / nb) * nb; j >= 0; j -= nb) {
    const int jb = std::min(nb, n - j);
    const int rows = n - j - jb;
    if (rows > 0) {
      // Columns of A21 are independent under a left multiplication ...
      in_chunks(jb, static_cast<double>(rows) * rows, monitor, [&](int c0, int len) {
        dtrmm_("L", "L", "N", "N", &rows, &len, &kOne, m.at(j + jb, j + jb), &ld,
               m.at(j + jb, j + c0), &ld, 1, 1, 1, 1);
      });
      // ... and its rows under a right one.
      in_chunks(rows, static_cast<double>(jb) * jb, monitor, [&](int r0, int len) {
        dtrsm_("R", "L", "N", "N", &len, &jb, &kMinusOne, m.at(j, j), &ld, m.at(j + jb + r0, j),
               &ld, 1, 1, 1, 1);
      });
    }
    int info = 0;
    dtrtri_("L", "N", &jb, m.at(j, j), &ld, &info, 1, 1);
    if (info != 0) return j + info;
    monitor.check();
  }
  return 0;
}

int blocked_potri(Eigen::MatrixXd& a, Monitor& monitor, int block) {
  const int info = blocked_trtri(a, monitor, block);
  if (info != 0) return info;
  // LAPACK's dlauum("L"): the lower triangle of L^{-T} L^{-1}, block row by
  // block row; row block i needs the rows below it, not yet overwritten.
  const Panel m(a, block);
  const int n = m.n, nb = m.nb, ld = m.ld;
  for (int i = 0; i < n; i += nb) {
    const int ib = std::min(nb, n - i);
    const int rows = n - i - ib;
    if (i > 0) {
      dtrmm_("L", "L", "T", "N", &ib, &i, &kOne, m.at(i, i), &ld, m.at(i, 0), &ld, 1, 1, 1, 1);
    }
    int lauum_info = 0;
    dlauum_("L", &ib, m.at(i, i), &ld, &lauum_info, 1);
    if (rows > 0) {
      if (i > 0) {
        in_chunks(i, 2.0 * ib * rows, monitor, [&](int c0, int len) {
          dgemm_("T", "N", &ib, &len, &rows, &kOne, m.at(i + ib, i), &ld, m.at(i + ib, c0), &ld,
                 &kOne, m.at(i, c0), &ld, 1, 1);
        });
      }
      dsyrk_("L", "T", &ib, &rows, &kOne, m.at(i + ib, i), &ld, &kOne, m.at(i, i), &ld, 1, 1);
    }
    monitor.check();
  }
  return 0;
}

}  // namespace noisylabels
