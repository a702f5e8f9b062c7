/*
 * The simulated driver's stream capture: a copy or a memset queued into a
 * capturing stream is a node of the capture's graph, as the driver records
 * it, and does nothing until the graph is launched; each launch does it
 * again. The graph shows the nodes to whoever walks it (Ember's graph scan).
 */
#include <string.h>

#include "harness.h"

#define MiB (1ull << 20)

struct captured {
	void *sim;
	CUstream s;
	CUdeviceptr p;
};

static struct captured start(void)
{
	struct captured c = { .sim = load_sim() };
	start_context(c.sim); /* the simulated driver's own entry points, as the shim's would be */
	CU_OK(SYM(c.sim, cuStreamCreate)(&c.s, CU_STREAM_NON_BLOCKING));
	CU_OK(SYM(c.sim, cuMemAlloc_v2)(&c.p, MiB));
	CU_OK(SYM(c.sim, cuMemsetD8_v2)(c.p, 0, MiB));
	return c;
}

/* The graph of what was queued into c's stream by queue(), instantiated. */
static CUgraphExec capture(const struct captured *c, void (*queue)(const struct captured *), CUgraph *graph)
{
	CU_OK(SYM(c->sim, cuStreamBeginCapture_v2)(c->s, CU_STREAM_CAPTURE_MODE_RELAXED));
	queue(c);
	CU_OK(SYM(c->sim, cuStreamEndCapture)(c->s, graph));
	CUgraphExec exec;
	CU_OK(SYM(c->sim, cuGraphInstantiateWithFlags)(&exec, *graph, 0));
	return exec;
}

static unsigned char byte_at(const struct captured *c, size_t offset)
{
	unsigned char b;
	CU_OK(SYM(c->sim, cuMemcpyDtoH_v2)(&b, c->p + offset, 1));
	return b;
}

static unsigned char source[MiB];

static void queue_copy(const struct captured *c)
{
	CU_OK(SYM(c->sim, cuMemcpyHtoDAsync_v2)(c->p, source, sizeof source, c->s));
}

Test(sim_capture, a_captured_copy_moves_nothing_until_each_launch)
{
	struct captured c = start();
	memset(source, 5, sizeof source);
	CUgraph graph;
	CUgraphExec exec = capture(&c, queue_copy, &graph);
	cr_expect_eq(byte_at(&c, 4096), 0, "the copy waits for the graph's launch");
	CU_OK(SYM(c.sim, cuGraphLaunch)(exec, c.s));
	CU_OK(SYM(c.sim, cuStreamSynchronize)(c.s));
	cr_expect_eq(byte_at(&c, 4096), 5);
	memset(source, 9, sizeof source);
	CU_OK(SYM(c.sim, cuGraphLaunch)(exec, c.s));
	CU_OK(SYM(c.sim, cuStreamSynchronize)(c.s));
	cr_expect_eq(byte_at(&c, MiB - 1), 9, "a second launch copies again, what the host buffer holds then");
}

Test(sim_capture, the_graph_holds_the_copy_as_a_memcpy_node)
{
	struct captured c = start();
	CUgraph graph;
	capture(&c, queue_copy, &graph);
	CUgraphNode node;
	size_t n = 1;
	CU_OK(SYM(c.sim, cuGraphGetNodes)(graph, &node, &n));
	cr_assert_eq(n, 1);
	CUgraphNodeType type;
	CU_OK(SYM(c.sim, cuGraphNodeGetType)(node, &type));
	cr_assert_eq(type, CU_GRAPH_NODE_TYPE_MEMCPY);
	CUDA_MEMCPY3D p;
	CU_OK(SYM(c.sim, cuGraphMemcpyNodeGetParams)(node, &p));
	cr_expect_eq(p.dstMemoryType, CU_MEMORYTYPE_DEVICE);
	cr_expect_eq(p.dstDevice, c.p);
	cr_expect_eq(p.srcMemoryType, CU_MEMORYTYPE_HOST);
	cr_expect_eq(p.srcHost, source);
	cr_expect_eq(p.WidthInBytes, sizeof source);
}

static void queue_memset(const struct captured *c)
{
	CU_OK(SYM(c->sim, cuMemsetD32Async)(c->p, 0x01010101u, MiB / 4, c->s));
}

Test(sim_capture, a_captured_memset_writes_nothing_until_the_launch)
{
	struct captured c = start();
	CUgraph graph;
	CUgraphExec exec = capture(&c, queue_memset, &graph);
	cr_expect_eq(byte_at(&c, 0), 0);
	CU_OK(SYM(c.sim, cuGraphLaunch)(exec, c.s));
	CU_OK(SYM(c.sim, cuStreamSynchronize)(c.s));
	cr_expect_eq(byte_at(&c, 0), 1);
}

Test(sim_capture, a_copy_node_of_more_than_one_row_is_refused)
{
	struct captured c = start();
	CUgraph graph;
	CU_OK(SYM(c.sim, cuGraphCreate)(&graph, 0));
	CUDA_MEMCPY3D p = { .srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = source, .srcPitch = 4096,
			    .dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = c.p, .dstPitch = 4096,
			    .WidthInBytes = 1024, .Height = 2, .Depth = 1 };
	CUgraphNode node;
	cr_expect_eq(SYM(c.sim, cuGraphAddMemcpyNode)(&node, graph, NULL, 0, &p, NULL), CUDA_ERROR_NOT_SUPPORTED);
}
