// cxxsort: a C++ guest for the input-sensitive analysis's names. Its
// routines are mangled by g++ (a namespace, a class, a template and two
// overloads), so the .aprof reports must carry the demangled names in "r"
// lines and the mangled ones in "u" lines, as aprof writes them. It sorts
// arrays of growing sizes with an insertion sort (quadratic cost in the
// input size) and prints checksums.
#include <cstdio>
#include <vector>

namespace emu {

template <typename T>
__attribute__((noinline)) void insertion_sort(std::vector<T> &v) {
	for (size_t i = 1; i < v.size(); i++) {
		T x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

class Summer {
public:
	explicit Summer(unsigned long seed) : total_(seed) {}
	__attribute__((noinline)) unsigned long add(const std::vector<int> &v) {
		for (int x : v)
			total_ = total_ * 31 + (unsigned long)x;
		return total_;
	}
	__attribute__((noinline)) unsigned long add(const std::vector<double> &v) {
		for (double x : v)
			total_ = total_ * 17 + (unsigned long)(x * 4);
		return total_;
	}

private:
	unsigned long total_;
};

} // namespace emu

int main() {
	emu::Summer s(7);
	unsigned seed = 12345;
	for (int n = 8; n <= 512; n *= 2) {
		std::vector<int> vi(n);
		std::vector<double> vd(n);
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			vi[i] = (int)(seed >> 16) % 1000;
			vd[i] = vi[i] / 4.0;
		}
		emu::insertion_sort(vi);
		emu::insertion_sort(vd);
		s.add(vi);
		printf("n=%d min=%d max=%d sum=%lu\n", n, vi[0], vi[n - 1], s.add(vd));
	}
	return 0;
}
