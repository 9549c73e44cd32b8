// Numerical constants shared by the core.
#ifndef NOISYLABELS_CONSTANTS_H
#define NOISYLABELS_CONSTANTS_H

namespace noisylabels {

// log(2 pi), the constant of every Gaussian log density in the core.
constexpr double kLog2Pi = 1.8378770664093454836;

}  // namespace noisylabels

#endif  // NOISYLABELS_CONSTANTS_H
