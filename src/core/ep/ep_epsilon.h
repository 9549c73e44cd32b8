// The M-step for the labelling-error rate epsilon, for any EP backend: it
// reads only the posterior marginals or the cavities of an EpState.
#pragma once

#include "ep/ep_types.h"

namespace noisylabels {

// Tilted: maximise log Z_EP in epsilon at the current cavities (EM on the
// tilted distributions). Paper: Kim & Ghahramani's closed-form update from
// the posterior marginals.
enum class EpsilonRule { Tilted, Paper };

// One M-step for epsilon; the result is clamped to [eps_min, eps_max]. The
// tilted rule is iterated to its fixed point at the current cavities (a
// concave 1-D problem), the paper's rule is closed form.
double epsilon_update(const VectorXd& y, const EpState& s, const EpLikelihood& lik,
                      EpsilonRule rule, double eps_min, double eps_max);

}  // namespace noisylabels
