// cnn: the forward pass of a small VGG-style network over a batch of
// 32x32 RGB images (NCHW floats), written by hand: two blocks of two 3x3
// convolutions (padding 1, ReLU) each ending in a 2x2 max-pool, then a
// fully connected layer to 10 logits. One launch per layer; each reads the
// activations the one before wrote, once, tile by tile (each 16x16 tile
// and its halo staged in shared memory), so the batch and its activations
// stream through the GPU layer after layer, and the weights are reused by
// every image.
#include "suite.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

namespace {

struct conv_shape {
	int cin, cout, hw; // channels in and out, and the image side, kept by the padding
	bool pool;         // a 2x2 max-pool after the ReLU
};
constexpr conv_shape convs[] = { { 3, 16, 32, false }, { 16, 16, 32, true }, { 16, 32, 16, false }, { 32, 32, 16, true } };
constexpr int nconv = sizeof(convs) / sizeof(convs[0]);
constexpr int fc_in = 32 * 8 * 8, fc_out = 10;

// Each layer takes what the one before gives, in whole 16x16 tiles and
// whole channel groups (the kernel's constants below).
constexpr bool shapes_chain()
{
	int c = 3, hw = 32;
	for (int l = 0; l < nconv; l++) {
		if (convs[l].cin != c || convs[l].hw != hw || hw % 16 || convs[l].cout % 16)
			return false;
		c = convs[l].cout;
		hw = convs[l].pool ? hw / 2 : hw;
	}
	return c * hw * hw == fc_in;
}
static_assert(shapes_chain(), "the layers do not chain");

// The parameters in one buffer: each convolution's weights [cout][cin][3][3]
// then its biases, then the fully connected weights [fc_out][fc_in] and biases.
constexpr size_t conv_weights(int l)
{
	return (size_t)convs[l].cout * convs[l].cin * 9;
}
constexpr size_t conv_offset(int l)
{
	size_t o = 0;
	for (int i = 0; i < l; i++)
		o += conv_weights(i) + convs[i].cout;
	return o;
}
constexpr size_t fc_offset = conv_offset(nconv);
constexpr size_t nparams = fc_offset + (size_t)fc_out * fc_in + fc_out;

// Floats per image: the input, each convolution's output, each pool's
// output and the logits.
constexpr size_t image_floats()
{
	size_t f = 3 * 32 * 32 + fc_out;
	for (int l = 0; l < nconv; l++) {
		f += (size_t)convs[l].cout * convs[l].hw * convs[l].hw;
		if (convs[l].pool)
			f += (size_t)convs[l].cout * convs[l].hw * convs[l].hw / 4;
	}
	return f;
}

const int tile = 16;       // output pixels a side per block, one a thread
const int cin_tile = 8;    // input channels staged at a time
const int cout_tile = 16;  // output channels a block computes, 16 accumulators a thread

struct state {
	size_t batch;
	float *params;
	float *input;             // batch x 3 x 32 x 32
	float *conv_out[nconv];   // batch x cout x hw x hw
	float *pool_out[nconv];   // batch x cout x hw/2 x hw/2, where the layer pools
	float *logits;            // batch x fc_out
};

// A block computes one 16x16 tile of cout_tile output channels of one image.
// Work items are (image, tile, channel group), the groups of one tile next
// to each other so that its input is read from DRAM once.
__global__ void conv3x3_relu(const float *in, const float *w, const float *bias, float *out, size_t batch,
                             int cin, int cout, int hw)
{
	__shared__ float patch[cin_tile][tile + 2][tile + 2];
	__shared__ float4 wt[cin_tile][9][cout_tile / 4]; // [ci][tap][co]: a thread reads four at once
	const int tid = threadIdx.y * tile + threadIdx.x;
	const int tiles = hw / tile, groups = cout / cout_tile;
	const size_t items = batch * tiles * tiles * groups;
	for (size_t item = blockIdx.x; item < items; item += gridDim.x) {
		int g = (int)(item % groups);
		size_t rest = item / groups;
		int t = (int)(rest % (tiles * tiles));
		size_t n = rest / (tiles * tiles);
		int y0 = t / tiles * tile, x0 = t % tiles * tile;
		float acc[cout_tile];
		for (int j = 0; j < cout_tile; j++)
			acc[j] = bias[g * cout_tile + j];
		for (int c0 = 0; c0 < cin; c0 += cin_tile) {
			int cn = min(cin_tile, cin - c0);
			__syncthreads(); // the last chunk has been used
			for (int e = tid; e < cn * (tile + 2) * (tile + 2); e += tile * tile) {
				int ci = e / ((tile + 2) * (tile + 2)), r = e / (tile + 2) % (tile + 2), c = e % (tile + 2);
				int y = y0 + r - 1, x = x0 + c - 1;
				float v = 0;
				if (y >= 0 && y < hw && x >= 0 && x < hw)
					v = in[((n * cin + c0 + ci) * hw + y) * hw + x];
				patch[ci][r][c] = v;
			}
			for (int e = tid; e < cn * 9 * cout_tile; e += tile * tile) {
				int co = e % cout_tile, tap = e / cout_tile % 9, ci = e / (9 * cout_tile);
				((float *)wt)[e] = w[((size_t)(g * cout_tile + co) * cin + c0 + ci) * 9 + tap];
			}
			__syncthreads();
			for (int ci = 0; ci < cn; ci++)
				for (int ky = 0; ky < 3; ky++)
					for (int kx = 0; kx < 3; kx++) {
						float v = patch[ci][threadIdx.y + ky][threadIdx.x + kx];
						for (int q = 0; q < cout_tile / 4; q++) {
							float4 f = wt[ci][ky * 3 + kx][q];
							acc[4 * q] = fmaf(v, f.x, acc[4 * q]);
							acc[4 * q + 1] = fmaf(v, f.y, acc[4 * q + 1]);
							acc[4 * q + 2] = fmaf(v, f.z, acc[4 * q + 2]);
							acc[4 * q + 3] = fmaf(v, f.w, acc[4 * q + 3]);
						}
					}
		}
		int y = y0 + threadIdx.y, x = x0 + threadIdx.x;
		for (int j = 0; j < cout_tile; j++)
			out[((n * cout + g * cout_tile + j) * hw + y) * hw + x] = fmaxf(acc[j], 0.0f);
	}
}

// planes: batch x channels planes of hw x hw, each to (hw/2) x (hw/2).
__global__ void maxpool2(const float *in, float *out, size_t planes, int hw)
{
	int h2 = hw / 2;
	size_t total = planes * h2 * h2;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
		size_t plane = i / (h2 * h2);
		int y = (int)(i % (h2 * h2)) / h2, x = (int)(i % h2);
		const float *p = in + plane * hw * hw + (size_t)(2 * y) * hw + 2 * x;
		out[i] = fmaxf(fmaxf(p[0], p[1]), fmaxf(p[hw], p[hw + 1]));
	}
}

// A block an image: each thread a slice of the inputs against all outputs,
// then a reduction over the block. 256 threads.
__global__ void fully_connected(const float *in, const float *w, const float *bias, float *out, size_t batch)
{
	__shared__ float part[8][fc_out];
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	for (size_t n = blockIdx.x; n < batch; n += gridDim.x) {
		float acc[fc_out] = {};
		for (int i = threadIdx.x; i < fc_in; i += blockDim.x) {
			float v = in[n * fc_in + i];
			for (int o = 0; o < fc_out; o++)
				acc[o] = fmaf(v, w[o * fc_in + i], acc[o]);
		}
		for (int o = 0; o < fc_out; o++) {
			for (int d = 16; d > 0; d /= 2)
				acc[o] += __shfl_down_sync(0xffffffffu, acc[o], d);
			if (lane == 0)
				part[warp][o] = acc[o];
		}
		__syncthreads();
		if (threadIdx.x < fc_out) {
			float s = bias[threadIdx.x];
			for (int v = 0; v < 8; v++)
				s += part[v][threadIdx.x];
			out[n * fc_out + threadIdx.x] = s;
		}
		__syncthreads(); // part is free for the next image
	}
}

float unit(size_t i, uint64_t seed)
{
	return (float)(suite_mix(i ^ seed) >> 40) / (float)(1 << 24);
}

// Weights uniform in +-sqrt(6/fan_in) (He's scale, so the activations
// neither vanish nor grow through the ReLUs), biases within +-0.05.
float param(size_t i, uint64_t seed)
{
	float u = 2 * unit(i, seed) - 1;
	for (int l = 0; l < nconv; l++) {
		if (i < conv_offset(l) + conv_weights(l))
			return u * sqrtf(6.0f / (convs[l].cin * 9));
		if (i < conv_offset(l + 1))
			return u * 0.05f;
	}
	if (i < fc_offset + (size_t)fc_out * fc_in)
		return u * sqrtf(6.0f / fc_in);
	return u * 0.05f;
}

void *make(size_t bytes)
{
	state *s = new state;
	size_t per_image = image_floats() * sizeof(float), pbytes = nparams * sizeof(float);
	s->batch = std::max<size_t>(1, bytes > pbytes ? (bytes - pbytes) / per_image : 1);
	s->params = (float *)suite_managed(pbytes);
	s->input = (float *)suite_managed(s->batch * 3 * 32 * 32 * sizeof(float));
	for (int l = 0; l < nconv; l++) {
		size_t plane = (size_t)convs[l].hw * convs[l].hw;
		s->conv_out[l] = (float *)suite_managed(s->batch * convs[l].cout * plane * sizeof(float));
		s->pool_out[l] = convs[l].pool ? (float *)suite_managed(s->batch * convs[l].cout * plane / 4 * sizeof(float))
		                               : nullptr;
	}
	s->logits = (float *)suite_managed(s->batch * fc_out * sizeof(float));
	suite_fill_f32(s->params, nparams, param, 5);
	suite_fill_f32(s->input, s->batch * 3 * 32 * 32, unit, 6);
	return s;
}

void run(void *p, suite_result *r)
{
	state *s = (state *)p;
	int nb = suite_blocks();
	const float *x = s->input;
	// each array's traffic, in the order first touched: the activations are written once and read once
	struct array {
		const float *at;
		double bytes, read, written;
	};
	std::vector<array> arrays;
	auto count = [&](const float *at, double bytes, double read, double written) {
		for (array &a : arrays)
			if (a.at == at) {
				a.read += read;
				a.written += written;
				return;
			}
		arrays.push_back({ at, bytes, read, written });
	};
	const double image = (double)s->batch * sizeof(float);
	count(s->params, nparams * sizeof(float), 0, 0);
	count(s->input, image * 3 * 32 * 32, 0, 0);
	for (int l = 0; l < nconv; l++) {
		const conv_shape &c = convs[l];
		size_t plane = (size_t)c.hw * c.hw;
		size_t items = s->batch * (c.hw / tile) * (c.hw / tile) * (c.cout / cout_tile);
		// a block an item where the grid allows: the blocks balance themselves
		int grid = (int)std::min<size_t>(items, INT_MAX);
		conv3x3_relu<<<grid, dim3(tile, tile)>>>(x, s->params + conv_offset(l), s->params + conv_offset(l) + conv_weights(l),
		                                         s->conv_out[l], s->batch, c.cin, c.cout, c.hw);
		const double out = image * c.cout * plane;
		count(x, 0, image * c.cin * plane, 0);
		count(s->params, 0, conv_weights(l) * sizeof(float), 0);
		count(s->conv_out[l], out, 0, out);
		x = s->conv_out[l];
		if (c.pool) {
			maxpool2<<<nb, 256>>>(x, s->pool_out[l], s->batch * c.cout, c.hw);
			count(x, 0, out, 0);
			count(s->pool_out[l], out / 4, 0, out / 4);
			x = s->pool_out[l];
		}
	}
	fully_connected<<<nb, 256>>>(x, s->params + fc_offset, s->params + fc_offset + (size_t)fc_out * fc_in, s->logits,
	                             s->batch);
	CHECK(cudaGetLastError());
	count(x, 0, image * fc_in, 0);
	count(s->params, 0, (double)fc_out * fc_in * sizeof(float), 0);
	count(s->logits, image * fc_out, 0, image * fc_out);
	for (const array &a : arrays)
		suite_traffic(r, a.at, a.bytes, a.read, a.written);
}

// The whole network for one image on the host, in double; features gets
// what the dense layer reads.
std::vector<double> forward(const float *params, const float *image, std::vector<double> &features)
{
	std::vector<double> a(image, image + 3 * 32 * 32);
	for (int l = 0; l < nconv; l++) {
		const conv_shape &c = convs[l];
		const float *w = params + conv_offset(l), *b = w + conv_weights(l);
		std::vector<double> o((size_t)c.cout * c.hw * c.hw);
		for (int co = 0; co < c.cout; co++)
			for (int y = 0; y < c.hw; y++)
				for (int x = 0; x < c.hw; x++) {
					double sum = b[co];
					for (int ci = 0; ci < c.cin; ci++)
						for (int ky = 0; ky < 3; ky++)
							for (int kx = 0; kx < 3; kx++) {
								int yy = y + ky - 1, xx = x + kx - 1;
								if (yy >= 0 && yy < c.hw && xx >= 0 && xx < c.hw)
									sum += w[(co * c.cin + ci) * 9 + ky * 3 + kx] *
									       a[((size_t)ci * c.hw + yy) * c.hw + xx];
							}
					o[((size_t)co * c.hw + y) * c.hw + x] = std::max(sum, 0.0);
				}
		if (c.pool) {
			int h2 = c.hw / 2;
			std::vector<double> q((size_t)c.cout * h2 * h2);
			for (int co = 0; co < c.cout; co++)
				for (int y = 0; y < h2; y++)
					for (int x = 0; x < h2; x++) {
						const double *p = &o[((size_t)co * c.hw + 2 * y) * c.hw + 2 * x];
						q[((size_t)co * h2 + y) * h2 + x] = std::max(std::max(p[0], p[1]), std::max(p[c.hw], p[c.hw + 1]));
					}
			o.swap(q);
		}
		a.swap(o);
	}
	features = a;
	std::vector<double> logits(fc_out);
	const float *w = params + fc_offset, *b = w + (size_t)fc_out * fc_in;
	for (int o = 0; o < fc_out; o++) {
		double sum = b[o];
		for (int i = 0; i < fc_in; i++)
			sum += w[(size_t)o * fc_in + i] * a[i];
		logits[o] = sum;
	}
	return logits;
}

// Four images, the first, the last and two between, through the whole
// network on the host: the 2048 features the dense layer reads (the last
// pool's output) and the 10 logits must match.
void check(void *p, suite_result *r)
{
	state *s = (state *)p;
	const size_t images[] = { 0, s->batch / 3, 2 * s->batch / 3, s->batch - 1 };
	const float *features = s->pool_out[nconv - 1];
	for (size_t n : images) {
		std::vector<double> want_features;
		std::vector<double> want = forward(s->params, s->input + n * 3 * 32 * 32, want_features);
		for (int i = 0; i < fc_in; i++) {
			double got = features[n * fc_in + i], w = want_features[i];
			if (!(std::fabs(got - w) <= 1e-4 * (1 + std::fabs(w)))) {
				r->note = "image " + std::to_string(n) + " feature " + std::to_string(i) + ": " +
				          std::to_string(got) + " against " + std::to_string(w);
				return;
			}
		}
		double scale = 0;
		for (double v : want)
			scale = std::max(scale, std::fabs(v));
		for (int o = 0; o < fc_out; o++) {
			float got = s->logits[n * fc_out + o];
			if (!(std::fabs(got - want[o]) <= 1e-3 * (1 + scale))) {
				r->note = "image " + std::to_string(n) + " logit " + std::to_string(o) + ": " + std::to_string(got) +
				          " against " + std::to_string(want[o]);
				return;
			}
		}
	}
	r->verified = true;
	r->note = "four images through the network on the host in double: their features and logits match";
}

void destroy(void *p)
{
	state *s = (state *)p;
	suite_free(s->params);
	suite_free(s->input);
	for (int l = 0; l < nconv; l++) {
		suite_free(s->conv_out[l]);
		suite_free(s->pool_out[l]);
	}
	suite_free(s->logits);
	delete s;
}

} // namespace

const suite_workload suite_cnn = { "cnn", "VGG-style forward pass: four 3x3 convolutions, two max-pools, one dense layer",
	                           make, run, check, destroy };
