// star: the Star Schema Benchmark's four query flights, two queries each,
// over a lineorder fact table stored column by column, joined to small
// date, part, supplier and customer tables by array lookup (their keys are
// dense). Each query is one grid-stride pass over the fact rows that reads
// only the columns it names: streaming, no reuse within a query, each
// query a different subset of the columns, the dimension tables in cache.
#include "suite.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <initializer_list>
#include <thread>
#include <vector>

namespace {

const int first_year = 1992, years = 7, days = 2557; // 1992-01-01 .. 1998-12-31
// Nation n lies in region n / 5, city c in nation c / 10; brand b is of
// category b / 40, category k of manufacturer k / 5.
const int cities = 250, brands = 1000;
const int america = 1, asia = 2, united_states = 9;
const uint64_t fact_seed = 0x55b0, part_seed = 0x55b1, supp_seed = 0x55b2, cust_seed = 0x55b3;

// Q1.x: sum(extendedprice * discount) over a date range, discount and quantity.
struct q1_args {
	int date_lo, date_hi, disc_lo, disc_hi, qty_lo, qty_hi;
};
// Q2.x: sum(revenue) for a brand range and a supplier region, by (year, brand).
struct q2_args {
	int brand_lo, brand_hi, region;
};
// Q3.x: sum(revenue) where customer and supplier are both in one region (by
// nations) or one nation (by cities), over years, by (c group, s group, year).
struct q3_args {
	bool by_city;
	int place, year_lo, year_hi;
};
// Q4.x: sum(revenue - supplycost) for customer and supplier in one region
// and parts of a range of manufacturers, over years; by (year, c_nation), or
// by (year, s_nation, p_category).
struct q4_args {
	bool by_part;
	int region, mfgr_lo, mfgr_hi, year_lo, year_hi;
};

// The query flight, and where each query's groups lie in the result array.
struct queries {
	q1_args q1[2];
	q2_args q2[2];
	q3_args q3[2];
	q4_args q4[2];
	size_t at1[2], at2[2], at3[2], at4[2], total;
};

int q2_groups(const q2_args &a)
{
	return years * (a.brand_hi - a.brand_lo + 1);
}
int q3_side(const q3_args &a)
{
	return a.by_city ? 10 : 5;
}
int q3_groups(const q3_args &a)
{
	return (a.year_hi - a.year_lo + 1) * q3_side(a) * q3_side(a);
}
int q4_cats(const q4_args &a)
{
	return 5 * (a.mfgr_hi - a.mfgr_lo + 1);
}
int q4_groups(const q4_args &a)
{
	return (a.year_hi - a.year_lo + 1) * 5 * (a.by_part ? q4_cats(a) : 1);
}

struct state {
	size_t rows;
	// the fact table's columns
	int *orderdate, *partkey, *suppkey, *custkey, *quantity, *extendedprice, *discount, *revenue, *supplycost;
	int D, P, S, C;
	int *d_year;
	int *p_mfgr, *p_category, *p_brand;
	int *s_city, *s_nation, *s_region;
	int *c_city, *c_nation, *c_region;
	unsigned long long *out; // every query's groups
	queries q;
	int year_start[years + 1]; // the first date key of each year, and the end
};


__device__ unsigned long long warp_sum(unsigned long long v)
{
	for (int o = 16; o; o >>= 1)
		v += __shfl_down_sync(~0u, v, o);
	return v;
}

// The date filter is a key range (date keys run in calendar order): no join.
__global__ void q1(const int *orderdate, const int *quantity, const int *extendedprice, const int *discount,
                   size_t rows, q1_args a, unsigned long long *out)
{
	unsigned long long sum = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows; i += (size_t)gridDim.x * blockDim.x) {
		int d = orderdate[i], q = quantity[i], p = extendedprice[i], c = discount[i];
		if (d >= a.date_lo && d <= a.date_hi && c >= a.disc_lo && c <= a.disc_hi && q >= a.qty_lo &&
		    q <= a.qty_hi)
			sum += (unsigned long long)p * c;
	}
	sum = warp_sum(sum);
	if ((threadIdx.x & 31) == 0 && sum)
		atomicAdd(out, sum);
}

__global__ void q2(const int *orderdate, const int *partkey, const int *suppkey, const int *revenue, size_t rows,
                   const int *d_year, const int *p_brand, const int *s_region, q2_args a, unsigned long long *out)
{
	const int span = a.brand_hi - a.brand_lo + 1;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows; i += (size_t)gridDim.x * blockDim.x) {
		int d = orderdate[i], pk = partkey[i], sk = suppkey[i], rev = revenue[i];
		int b = p_brand[pk];
		if (b >= a.brand_lo && b <= a.brand_hi && s_region[sk] == a.region)
			atomicAdd(&out[(d_year[d] - first_year) * span + b - a.brand_lo], (unsigned long long)rev);
	}
}

// Filter on c_filter[ck] == s_filter[sk] == place, group by c_group and
// s_group, which are then within [lo, lo + side).
__global__ void q3(const int *orderdate, const int *custkey, const int *suppkey, const int *revenue, size_t rows,
                   const int *d_year, const int *c_filter, const int *s_filter, const int *c_group,
                   const int *s_group, q3_args a, int lo, int side, unsigned long long *out)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows; i += (size_t)gridDim.x * blockDim.x) {
		int d = orderdate[i], ck = custkey[i], sk = suppkey[i], rev = revenue[i];
		int y = d_year[d];
		if (c_filter[ck] == a.place && s_filter[sk] == a.place && y >= a.year_lo && y <= a.year_hi)
			atomicAdd(&out[((y - a.year_lo) * side + c_group[ck] - lo) * side + s_group[sk] - lo],
			          (unsigned long long)rev);
	}
}

__global__ void q4(const int *orderdate, const int *custkey, const int *suppkey, const int *partkey,
                   const int *revenue, const int *supplycost, size_t rows, const int *d_year, const int *c_region,
                   const int *s_region, const int *p_mfgr, const int *c_nation, const int *s_nation,
                   const int *p_category, q4_args a, unsigned long long *out)
{
	const int cats = 5 * (a.mfgr_hi - a.mfgr_lo + 1);
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows; i += (size_t)gridDim.x * blockDim.x) {
		int d = orderdate[i], ck = custkey[i], sk = suppkey[i], pk = partkey[i];
		int profit = revenue[i] - supplycost[i];
		int y = d_year[d], m = p_mfgr[pk];
		if (c_region[ck] == a.region && s_region[sk] == a.region && m >= a.mfgr_lo && m <= a.mfgr_hi &&
		    y >= a.year_lo && y <= a.year_hi) {
			int g = a.by_part ? ((y - a.year_lo) * 5 + s_nation[sk] - 5 * a.region) * cats + p_category[pk] -
			                            5 * a.mfgr_lo
			                  : (y - a.year_lo) * 5 + c_nation[ck] - 5 * a.region;
			atomicAdd(&out[g], (unsigned long long)(long long)profit);
		}
	}
}

int *ints(size_t n)
{
	return (int *)suite_managed(n * sizeof(int));
}

void *make(size_t bytes)
{
	state *s = new state;
	// SSB's table sizes for a scale factor of rows / 6M, with a floor of
	// a hundred suppliers and a thousand parts and customers.
	double sf = bytes / 36.0 / 6e6;
	s->D = days;
	s->P = (int)(sf >= 1 ? 200000 * (1 + std::floor(std::log2(sf))) : std::max(1000.0, 200000 * sf));
	s->S = (int)std::max(100.0, 2000 * sf);
	s->C = (int)std::max(1000.0, 30000 * sf);
	size_t dims = (s->D + 3.0 * (s->P + s->S + s->C)) * sizeof(int) + 4096;
	s->rows = std::max<size_t>(1024, (bytes - std::min(bytes / 2, dims)) / (9 * sizeof(int)));

	s->d_year = ints(s->D);
	for (int y = first_year, k = 0; y < first_year + years; y++) {
		s->year_start[y - first_year] = k;
		int n = y % 4 ? 365 : 366;
		for (int d = 0; d < n; d++)
			s->d_year[k++] = y;
	}
	s->year_start[years] = days;
	s->p_mfgr = ints(s->P), s->p_category = ints(s->P), s->p_brand = ints(s->P);
	for (int p = 0; p < s->P; p++) {
		s->p_brand[p] = (int)(suite_mix(p ^ part_seed) % brands);
		s->p_category[p] = s->p_brand[p] / 40;
		s->p_mfgr[p] = s->p_category[p] / 5;
	}
	s->s_city = ints(s->S), s->s_nation = ints(s->S), s->s_region = ints(s->S);
	for (int k = 0; k < s->S; k++) {
		s->s_city[k] = (int)(suite_mix(k ^ supp_seed) % cities);
		s->s_nation[k] = s->s_city[k] / 10;
		s->s_region[k] = s->s_nation[k] / 5;
	}
	s->c_city = ints(s->C), s->c_nation = ints(s->C), s->c_region = ints(s->C);
	for (int k = 0; k < s->C; k++) {
		s->c_city[k] = (int)(suite_mix(k ^ cust_seed) % cities);
		s->c_nation[k] = s->c_city[k] / 10;
		s->c_region[k] = s->c_nation[k] / 5;
	}

	// The flight: SSB's Q1.1, Q1.2, Q2.1, Q2.2, Q3.1, Q3.2, Q4.1, Q4.2.
	queries &q = s->q;
	int jan94 = s->year_start[1994 - first_year];
	q.q1[0] = { s->year_start[1993 - first_year], s->year_start[1994 - first_year] - 1, 1, 3, 1, 24 };
	q.q1[1] = { jan94, jan94 + 30, 4, 6, 26, 35 };
	q.q2[0] = { 40, 79, america };   // p_category = 'MFGR#12'
	q.q2[1] = { 260, 267, asia };    // p_brand1 between 'MFGR#2221' and 'MFGR#2228'
	q.q3[0] = { false, asia, 1992, 1997 };
	q.q3[1] = { true, united_states, 1992, 1997 };
	q.q4[0] = { false, america, 0, 1, 1992, 1998 };
	q.q4[1] = { true, america, 0, 1, 1997, 1998 };
	size_t at = 0;
	for (int k = 0; k < 2; k++)
		q.at1[k] = at, at += 1;
	for (int k = 0; k < 2; k++)
		q.at2[k] = at, at += q2_groups(q.q2[k]);
	for (int k = 0; k < 2; k++)
		q.at3[k] = at, at += q3_groups(q.q3[k]);
	for (int k = 0; k < 2; k++)
		q.at4[k] = at, at += q4_groups(q.q4[k]);
	q.total = at;
	s->out = (unsigned long long *)suite_managed(q.total * sizeof(unsigned long long));

	const size_t n = s->rows;
	s->orderdate = ints(n), s->partkey = ints(n), s->suppkey = ints(n), s->custkey = ints(n);
	s->quantity = ints(n), s->extendedprice = ints(n), s->discount = ints(n), s->revenue = ints(n);
	s->supplycost = ints(n);
	suite_for_shares(n, [s](unsigned, size_t lo, size_t hi) {
		for (size_t i = lo; i < hi; i++) {
			uint64_t a = suite_mix((i << 2) ^ fact_seed), b = suite_mix((i << 2 | 1) ^ fact_seed),
			         c = suite_mix((i << 2 | 2) ^ fact_seed);
			int price = 900 + (int)((a >> 32) % 1101), qty = 1 + (int)((c >> 32 & 0xffff) % 50),
			    disc = (int)((c >> 48) % 11);
			s->orderdate[i] = (int)((uint32_t)a % days);
			s->partkey[i] = (int)((uint32_t)b % s->P);
			s->suppkey[i] = (int)((b >> 32) % s->S);
			s->custkey[i] = (int)((uint32_t)c % s->C);
			s->quantity[i] = qty;
			s->discount[i] = disc;
			s->extendedprice[i] = qty * price;
			s->revenue[i] = qty * price * (100 - disc) / 100;
			s->supplycost[i] = price * 6 / 10;
		}
	});
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	const queries &q = s->q;
	const int nb = suite_blocks();
	const size_t n = s->rows;
	CHECK(cudaMemset(s->out, 0, q.total * sizeof(unsigned long long)));
	// the fact columns each query reads, noted beside its launch (the dimension tables are looked up, and small)
	std::vector<std::pair<const int *, int>> times_read;
	auto reads = [&times_read](std::initializer_list<const int *> cols) {
		for (const int *c : cols) {
			auto at = std::find_if(times_read.begin(), times_read.end(), [c](const auto &e) { return e.first == c; });
			if (at == times_read.end())
				times_read.push_back({ c, 1 });
			else
				at->second++;
		}
	};
	for (int k = 0; k < 2; k++) {
		reads({ s->orderdate, s->quantity, s->extendedprice, s->discount });
		q1<<<nb, 256>>>(s->orderdate, s->quantity, s->extendedprice, s->discount, n, q.q1[k], s->out + q.at1[k]);
	}
	for (int k = 0; k < 2; k++) {
		reads({ s->orderdate, s->partkey, s->suppkey, s->revenue });
		q2<<<nb, 256>>>(s->orderdate, s->partkey, s->suppkey, s->revenue, n, s->d_year, s->p_brand, s->s_region,
		                q.q2[k], s->out + q.at2[k]);
	}
	for (int k = 0; k < 2; k++) {
		const q3_args &a = q.q3[k];
		int side = q3_side(a), lo = a.place * side;
		reads({ s->orderdate, s->custkey, s->suppkey, s->revenue });
		if (a.by_city)
			q3<<<nb, 256>>>(s->orderdate, s->custkey, s->suppkey, s->revenue, n, s->d_year, s->c_nation,
			                s->s_nation, s->c_city, s->s_city, a, lo, side, s->out + q.at3[k]);
		else
			q3<<<nb, 256>>>(s->orderdate, s->custkey, s->suppkey, s->revenue, n, s->d_year, s->c_region,
			                s->s_region, s->c_nation, s->s_nation, a, lo, side, s->out + q.at3[k]);
	}
	for (int k = 0; k < 2; k++) {
		reads({ s->orderdate, s->custkey, s->suppkey, s->partkey, s->revenue, s->supplycost });
		q4<<<nb, 256>>>(s->orderdate, s->custkey, s->suppkey, s->partkey, s->revenue, s->supplycost, n,
		                s->d_year, s->c_region, s->s_region, s->p_mfgr, s->c_nation, s->s_nation, s->p_category,
		                q.q4[k], s->out + q.at4[k]);
	}
	CHECK(cudaGetLastError());
	r->sparse = false;
	const double column = (double)n * sizeof(int);
	for (const auto &c : times_read)
		suite_traffic(r, c.first, column, c.second * column, 0);
	suite_traffic(r, s->out, q.total * 8.0, 0, q.total * 8.0); // every query's groups
}

// Every query again on the host, over every row, a different way: each
// filter becomes a table over its attribute's values with a bit a query,
// so that a row costs the host a few lookups and one AND, and only the
// rows some query keeps are grouped. The host keeps one attribute a key (a
// city, a brand; the rest follows from the schema), gathered for a batch
// of rows at a time so that the cache misses overlap. The columns come
// back in chunks by cudaMemcpy into pinned buffers (DMA at link speed,
// where faulting them back page by page would be slow).
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	const queries &q = s->q;
	std::vector<uint16_t> part(s->P);
	std::vector<uint8_t> supp(s->S), cust(s->C);
	std::vector<uint8_t> year(s->D);
	for (int k = 0; k < s->P; k++)
		part[k] = (uint16_t)s->p_brand[k];
	for (int k = 0; k < s->S; k++)
		supp[k] = (uint8_t)s->s_city[k];
	for (int k = 0; k < s->C; k++)
		cust[k] = (uint8_t)s->c_city[k];
	for (int k = 0; k < s->D; k++)
		year[k] = (uint8_t)(s->d_year[k] - first_year);

	// Bit j of a table entry: query j (Q1.1, Q1.2, Q2.1, ... Q4.2) keeps
	// rows with that value, or does not filter on that attribute.
	std::vector<uint8_t> by_date(s->D, 0xff), by_brand(brands, 0xff), by_supp(cities, 0xff),
		by_cust(cities, 0xff), by_disc(11, 0xff), by_qty(51, 0xff);
	auto keep = [](std::vector<uint8_t> &t, int j, auto pass) {
		for (size_t v = 0; v < t.size(); v++)
			if (!pass((int)v))
				t[v] &= (uint8_t)~(1u << j);
	};
	for (int k = 0; k < 2; k++) {
		const q1_args &a = q.q1[k];
		keep(by_date, k, [&](int d) { return d >= a.date_lo && d <= a.date_hi; });
		keep(by_disc, k, [&](int v) { return v >= a.disc_lo && v <= a.disc_hi; });
		keep(by_qty, k, [&](int v) { return v >= a.qty_lo && v <= a.qty_hi; });
		const q2_args &b = q.q2[k];
		keep(by_brand, 2 + k, [&](int v) { return v >= b.brand_lo && v <= b.brand_hi; });
		keep(by_supp, 2 + k, [&](int c) { return c / 50 == b.region; });
		const q3_args &c = q.q3[k];
		auto place = [&](int city) { return c.by_city ? city / 10 == c.place : city / 50 == c.place; };
		keep(by_cust, 4 + k, place);
		keep(by_supp, 4 + k, place);
		keep(by_date, 4 + k, [&](int d) { return year[d] + first_year >= c.year_lo && year[d] + first_year <= c.year_hi; });
		const q4_args &e = q.q4[k];
		keep(by_cust, 6 + k, [&](int city) { return city / 50 == e.region; });
		keep(by_supp, 6 + k, [&](int city) { return city / 50 == e.region; });
		keep(by_brand, 6 + k, [&](int v) { return v / 200 >= e.mfgr_lo && v / 200 <= e.mfgr_hi; });
		keep(by_date, 6 + k, [&](int d) { return year[d] + first_year >= e.year_lo && year[d] + first_year <= e.year_hi; });
	}

	const int ncols = 9;
	int *const cols[ncols] = { s->orderdate, s->partkey, s->suppkey, s->custkey, s->quantity,
		                   s->extendedprice, s->discount, s->revenue, s->supplycost };
	const size_t chunk = std::min<size_t>(s->rows, 1 << 18);
	const unsigned k = suite_workers();
	std::vector<std::vector<unsigned long long>> acc(k, std::vector<unsigned long long>(q.total, 0));

	// Rows [0, n) of a chunk whose columns lie chunk apart from c, into o.
	auto sum = [&](const int *c, size_t n, unsigned long long *o) {
		const int *od = c, *pk = c + chunk, *sk = c + 2 * chunk, *ck = c + 3 * chunk, *qt = c + 4 * chunk,
		          *ep = c + 5 * chunk, *dc = c + 6 * chunk, *rv = c + 7 * chunk, *sc = c + 8 * chunk;
		const int batch = 256;
		uint16_t pb[batch];
		uint8_t sb[batch], cb[batch];
		for (size_t b0 = 0; b0 < n; b0 += batch) {
			const int m = (int)std::min<size_t>(batch, n - b0);
			for (int x = 0; x < m; x++) {
				pb[x] = part[pk[b0 + x]];
				sb[x] = supp[sk[b0 + x]];
				cb[x] = cust[ck[b0 + x]];
			}
			for (int x = 0; x < m; x++) {
				const size_t i = b0 + x;
				const int d = od[i], brand = pb[x], s_city = sb[x], c_city = cb[x];
				unsigned bits = by_date[d] & by_brand[brand] & by_supp[s_city] & by_cust[c_city] &
				                by_disc[dc[i]] & by_qty[qt[i]];
				for (; bits; bits &= bits - 1) {
					const int j = __builtin_ctz(bits), y = year[d];
					const int s_nat = s_city / 10, c_nat = c_city / 10;
					size_t g;
					unsigned long long v = (unsigned long long)rv[i];
					if (j < 2) {
						g = q.at1[j];
						v = (unsigned long long)ep[i] * dc[i];
					} else if (j < 4) {
						const q2_args &a = q.q2[j - 2];
						g = q.at2[j - 2] + y * (a.brand_hi - a.brand_lo + 1) + brand - a.brand_lo;
					} else if (j < 6) {
						const q3_args &a = q.q3[j - 4];
						const int side = q3_side(a), lo = a.place * side;
						const int cg = a.by_city ? c_city : c_nat, sg = a.by_city ? s_city : s_nat;
						g = q.at3[j - 4] + ((y + first_year - a.year_lo) * side + cg - lo) * side + sg - lo;
					} else {
						const q4_args &a = q.q4[j - 6];
						int h = (y + first_year - a.year_lo) * 5;
						h = a.by_part ? (h + s_nat - 5 * a.region) * q4_cats(a) + brand / 40 - 5 * a.mfgr_lo
						              : h + c_nat - 5 * a.region;
						g = q.at4[j - 6] + h;
						v = (unsigned long long)(long long)(rv[i] - sc[i]);
					}
					o[g] += v;
				}
			}
		}
	};

	// Each worker copies a chunk into its own pinned buffer and sums it:
	// the copies of one overlap the sums of the others.
	std::atomic<size_t> next{ 0 };
	std::vector<std::thread> pool;
	for (unsigned t = 0; t < k; t++)
		pool.emplace_back([&, t] {
			int *c; // ncols columns of chunk rows
			CHECK(cudaMallocHost(&c, ncols * chunk * sizeof(int)));
			for (size_t lo; (lo = next.fetch_add(chunk)) < s->rows;) {
				const size_t n = std::min(chunk, s->rows - lo);
				for (int j = 0; j < ncols; j++)
					CHECK(cudaMemcpy(c + j * chunk, cols[j] + lo, n * sizeof(int), cudaMemcpyDefault));
				sum(c, n, acc[t].data());
			}
			CHECK(cudaFreeHost(c));
		});
	for (auto &th : pool)
		th.join();

	std::vector<unsigned long long> gpu(q.total);
	CHECK(cudaMemcpy(gpu.data(), s->out, q.total * sizeof(unsigned long long), cudaMemcpyDefault));
	static const char *const names[8] = { "Q1.1", "Q1.2", "Q2.1", "Q2.2", "Q3.1", "Q3.2", "Q4.1", "Q4.2" };
	const size_t starts[9] = { q.at1[0], q.at1[1], q.at2[0], q.at2[1], q.at3[0], q.at3[1], q.at4[0], q.at4[1], q.total };
	size_t hit = 0; // groups that some row reached
	for (int j = 0; j < 8; j++)
		for (size_t g = starts[j]; g < starts[j + 1]; g++) {
			unsigned long long want = 0;
			for (unsigned t = 0; t < k; t++)
				want += acc[t][g];
			hit += want != 0;
			if (gpu[g] != want) {
				r->note = std::string(names[j]) + " group " + std::to_string(g - starts[j]) + ": " +
				          std::to_string(gpu[g]) + " against " + std::to_string(want);
				return;
			}
		}
	r->verified = true;
	r->note = "8 queries recomputed on the host over all " + std::to_string(s->rows) + " rows (" +
	          std::to_string(hit) + " of " + std::to_string(q.total) + " groups non-empty)";
}

void destroy(void *p)
{
	state *s = (state *)p;
	int *all[] = { s->orderdate, s->partkey, s->suppkey, s->custkey, s->quantity, s->extendedprice,
		       s->discount, s->revenue, s->supplycost, s->d_year, s->p_mfgr, s->p_category,
		       s->p_brand, s->s_city, s->s_nation, s->s_region, s->c_city, s->c_nation, s->c_region };
	for (int *a : all)
		suite_free(a);
	suite_free(s->out);
	delete s;
}

} // namespace

const suite_workload suite_star = { "star", "Star Schema Benchmark flight, eight column-scan queries",
	                            make, run, check, destroy };
