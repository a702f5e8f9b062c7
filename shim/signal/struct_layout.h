/*
 * Where a compiler puts a structure's fields: the arithmetic the decoders
 * of structure arguments share (tensor_lists.c, cat_inputs.c).
 */
#ifndef EMBER_STRUCT_LAYOUT_H
#define EMBER_STRUCT_LAYOUT_H

#include <stdint.h>

/* v rounded up to a multiple of a field's alignment a. */
static inline uint32_t ember_align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

#endif
