// cholesky: the shared parts of every version: the operation list, the
// naive tile kernels (out of line here, so every version runs the same
// machine code), the input matrix, the serial reference and the check.
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "cholesky/cholesky.hpp"

namespace strata_bench::cholesky {
namespace {

// A_kk := its lower Cholesky factor; the strict upper part set to 0.
void potrf(double* a, std::size_t b) noexcept {
  for (std::size_t j = 0; j < b; ++j) {
    double d = a[j * b + j];
    for (std::size_t p = 0; p < j; ++p) {
      d -= a[j * b + p] * a[j * b + p];
    }
    d = std::sqrt(d);
    a[j * b + j] = d;
    for (std::size_t i = j + 1; i < b; ++i) {
      double s = a[i * b + j];
      for (std::size_t p = 0; p < j; ++p) {
        s -= a[i * b + p] * a[j * b + p];
      }
      a[i * b + j] = s / d;
    }
    for (std::size_t i = j + 1; i < b; ++i) {
      a[j * b + i] = 0.0;
    }
  }
}

// A := A L^-T: row by row, forward substitution x L^T = a.
void trsm(const double* l, double* a, std::size_t b) noexcept {
  for (std::size_t r = 0; r < b; ++r) {
    double* x = a + r * b;
    for (std::size_t j = 0; j < b; ++j) {
      double s = x[j];
      for (std::size_t p = 0; p < j; ++p) {
        s -= x[p] * l[j * b + p];
      }
      x[j] = s / l[j * b + j];
    }
  }
}

// The transpose of a b x b tile into this thread's buffer, so the updates
// below run along rows (contiguous, vectorisable) with every element still
// accumulated in the order p = 0, 1, ..., b-1.
const double* transposed(const double* a, std::size_t b) {
  thread_local std::vector<double> buffer;
  buffer.resize(b * b);
  for (std::size_t i = 0; i < b; ++i) {
    for (std::size_t p = 0; p < b; ++p) {
      buffer[p * b + i] = a[i * b + p];
    }
  }
  return buffer.data();
}

// C -= A B^T on the lower triangle of C (syrk: B = A) or all of it (gemm).
void update(const double* a, const double* b_tile, double* c, std::size_t b, bool lower_only) {
  const double* bt = transposed(b_tile, b);
  for (std::size_t i = 0; i < b; ++i) {
    double* ci = c + i * b;
    const std::size_t cols = lower_only ? i + 1 : b;
    for (std::size_t p = 0; p < b; ++p) {
      const double aip = a[i * b + p];
      const double* btp = bt + p * b;
      for (std::size_t j = 0; j < cols; ++j) {
        ci[j] -= aip * btp[j];
      }
    }
  }
}

// An off-diagonal entry in [0, 1), the same for (i, j) and (j, i).
double entry(std::size_t i, std::size_t j) noexcept {
  std::uint64_t x = (std::uint64_t{i < j ? i : j} << 32) ^ (i < j ? j : i);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

tiled_matrix make_input(shape s) {
  tiled_matrix a(s);
  const std::size_t b = s.block;
  for (std::size_t ti = 0; ti < s.tiles; ++ti) {
    for (std::size_t tj = 0; tj <= ti; ++tj) {
      double* t = a.tile(ti, tj);
      for (std::size_t r = 0; r < b; ++r) {
        for (std::size_t c = 0; c < b; ++c) {
          const std::size_t i = ti * b + r;
          const std::size_t j = tj * b + c;
          t[r * b + c] = entry(i, j) + (i == j ? static_cast<double>(s.n()) : 0.0);
        }
      }
    }
  }
  return a;
}

// Entry (i, j) of the lower triangle of a tiled matrix (0 above it).
double lower(const tiled_matrix& m, std::size_t i, std::size_t j) noexcept {
  if (j > i) {
    return 0.0;
  }
  const std::size_t b = m.dims().block;
  return m.tile(i / b, j / b)[(i % b) * b + j % b];
}

// ||L L^T - A||_F / ||A||_F over the lower triangle.
double residual(const tiled_matrix& l, const tiled_matrix& a) {
  const std::size_t n = l.dims().n();
  std::vector<double> dense(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      dense[i * n + j] = lower(l, i, j);
    }
  }
  double err = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      double s = 0.0;
      for (std::size_t p = 0; p <= j; ++p) {
        s += dense[i * n + p] * dense[j * n + p];
      }
      const double aij = lower(a, i, j);
      err += (s - aij) * (s - aij);
      norm += aij * aij;
    }
  }
  return std::sqrt(err / norm);
}

struct made {
  std::unique_ptr<tiled_matrix> input;
  std::unique_ptr<tiled_matrix> reference;
};

const made& made_for(shape s) {
  static std::mutex m;
  static std::map<std::pair<std::size_t, std::size_t>, made> all;
  std::lock_guard lock(m);
  made& x = all[{s.tiles, s.block}];
  if (!x.input) {
    x.input = std::make_unique<tiled_matrix>(make_input(s));
    auto l = std::make_unique<tiled_matrix>(s);
    load(*l, *x.input);
    for (const op& o : ops(s.tiles)) {
      run(*l, o);
    }
    const double r = residual(*l, *x.input);
    if (!(r < 1e-10)) {
      throw std::runtime_error("cholesky: serial reference has ||LL^T - A|| / ||A|| = " + std::to_string(r));
    }
    x.reference = std::move(l);
  }
  return x;
}

}  // namespace

std::vector<op> ops(std::size_t tiles) {
  const auto t = static_cast<std::uint32_t>(tiles);
  std::vector<op> list;
  for (std::uint32_t k = 0; k < t; ++k) {
    list.push_back({kind::potrf, k, k, k});
    for (std::uint32_t i = k + 1; i < t; ++i) {
      list.push_back({kind::trsm, i, k, k});
    }
    for (std::uint32_t i = k + 1; i < t; ++i) {
      list.push_back({kind::syrk, i, i, k});
    }
    for (std::uint32_t i = k + 1; i < t; ++i) {
      for (std::uint32_t j = k + 1; j < i; ++j) {
        list.push_back({kind::gemm, i, j, k});
      }
    }
  }
  return list;
}

std::size_t inputs(const op& o, std::uint32_t (&row)[2], std::uint32_t (&col)[2]) noexcept {
  switch (o.what) {
    case kind::potrf:
      return 0;
    case kind::trsm:
      row[0] = o.k;
      col[0] = o.k;
      return 1;
    case kind::syrk:
      row[0] = o.i;
      col[0] = o.k;
      return 1;
    case kind::gemm:
      row[0] = o.i;
      col[0] = o.k;
      row[1] = o.j;
      col[1] = o.k;
      return 2;
  }
  return 0;
}

void run(tiled_matrix& m, const op& o) noexcept {
  const std::size_t b = m.dims().block;
  switch (o.what) {
    case kind::potrf:
      potrf(m.tile(o.k, o.k), b);
      break;
    case kind::trsm:
      trsm(m.tile(o.k, o.k), m.tile(o.i, o.k), b);
      break;
    case kind::syrk:
      update(m.tile(o.i, o.k), m.tile(o.i, o.k), m.tile(o.i, o.i), b, true);
      break;
    case kind::gemm:
      update(m.tile(o.i, o.k), m.tile(o.j, o.k), m.tile(o.i, o.j), b, false);
      break;
  }
}

const tiled_matrix& input(shape s) { return *made_for(s).input; }
const tiled_matrix& reference(shape s) { return *made_for(s).reference; }

void load(tiled_matrix& m, const tiled_matrix& a) noexcept {
  const std::size_t bb = a.dims().block * a.dims().block;
  for (std::size_t i = 0; i < a.dims().tiles; ++i) {
    std::memcpy(m.tile(i, 0), a.tile(i, 0), (i + 1) * bb * sizeof(double));
  }
}

verdict check(const tiled_matrix& m) {
  const shape s = m.dims();
  const tiled_matrix& want = reference(s);
  const std::size_t bb = s.block * s.block;
  for (std::size_t i = 0; i < s.tiles; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      const double* got = m.tile(i, j);
      const double* ref = want.tile(i, j);
      for (std::size_t e = 0; e < bb; ++e) {
        if (got[e] != ref[e]) {
          std::ostringstream o;
          o.precision(17);
          o << "L tile (" << i << "," << j << ") element " << e << " = " << got[e] << ", serial " << ref[e];
          return {false, o.str()};
        }
      }
    }
  }
  const auto n = static_cast<double>(s.n());
  return {true, {}, n * n * n / 3.0 * 1e-9};
}

}  // namespace strata_bench::cholesky
