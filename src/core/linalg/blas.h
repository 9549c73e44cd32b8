// Fortran BLAS/LAPACK routines of the library R (or the benchmark build)
// links to, declared once for the whole core with the gfortran hidden
// string-length arguments, so that the core needs no R header.
#ifndef NOISYLABELS_BLAS_H
#define NOISYLABELS_BLAS_H

#include <cstddef>

extern "C" {
void dsyr_(const char* uplo, const int* n, const double* alpha, const double* x, const int* incx,
           double* a, const int* lda, std::size_t uplo_len);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb, std::size_t side_len, std::size_t uplo_len, std::size_t transa_len,
            std::size_t diag_len);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc, std::size_t transa_len,
            std::size_t transb_len);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* beta, double* c, const int* ldc,
            std::size_t uplo_len, std::size_t trans_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dlauum_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dtrmm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb, std::size_t side_len, std::size_t uplo_len, std::size_t transa_len,
            std::size_t diag_len);
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda,
             int* info, std::size_t uplo_len, std::size_t diag_len);
}

#endif  // NOISYLABELS_BLAS_H
