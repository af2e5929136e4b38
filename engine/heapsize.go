package engine

// What a collection held on Go's heap really takes there, as Go's
// allocator and its maps (Swiss tables, since Go 1.24) lay it out, so that
// a heap object's charge is the memory it holds and not a guess: every
// heap object's charge is built from these, and TestHeapChargeMatchesHeap
// holds them to what runtime.MemStats measures.

// sizeClasses are Go's allocator's size classes for small objects
// (internal/runtime/gc's SizeClassToSize, without its zero class): an
// allocation takes the first class it fits.
var sizeClasses = [...]int32{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048,
	2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880,
	12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// pageSize is the unit Go's allocator gives an object larger than the
// largest size class.
const pageSize = 8192

// allocBytes is what one allocation of n bytes takes on Go's heap.
func allocBytes(n int) int64 {
	if n <= 0 {
		return 0
	}
	if n > int(sizeClasses[len(sizeClasses)-1]) {
		return int64((n + pageSize - 1) / pageSize * pageSize)
	}
	lo, hi := 0, len(sizeClasses)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if int(sizeClasses[mid]) < n {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int64(sizeClasses[lo])
}

// stringBytes is what a string of n bytes copied from a []byte takes: none
// for the empty string and for one byte (the runtime has those
// statically), else its size class. Below 16 bytes the allocator packs
// such pointer-free objects into 16-byte blocks, but a field and its value
// seldom share one (measured: 16 bytes each).
func stringBytes(n int) int64 {
	if n <= 1 {
		return 0
	}
	return allocBytes(max(n, 16))
}

// Go's maps. A map of at most 8 entries is one group; a bigger one has
// tables of groups, grown by doubling before they pass 7/8 full, and
// never shrinks, so its size follows the most entries it ever held.
const (
	mapGroupSlots = 8
	mapHeader     = 48 // the map's header (internal/runtime/maps.Map)
	mapTable      = 32 // each table's header
	mapTableMax   = 1024
)

// mapBytes is what a Go map whose entries take slot bytes each (key and
// value) takes once it has held peak entries.
func mapBytes(peak int, slot int) int64 {
	group := mapGroupSlots + mapGroupSlots*slot // a control word, then the slots
	if peak <= mapGroupSlots {
		return mapHeader + allocBytes(group)
	}
	capacity := 1
	for capacity*7 < peak*8 {
		capacity <<= 1
	}
	tables := max(capacity/mapTableMax, 1)
	perTable := min(capacity, mapTableMax)
	// A directory of table pointers once there are several.
	dir := int64(0)
	if tables > 1 {
		dir = allocBytes(8 * tables)
	}
	return mapHeader + dir + int64(tables)*(mapTable+allocBytes(perTable/mapGroupSlots*group))
}

// Slots of the maps the heap objects use: map[string]string and
// map[string]int; and the share of its shard's heap table (a
// map[uint64]heapObject, 24 bytes a slot) one object takes, at the table's
// lowest load (7/16, just after it doubled).
const (
	slotStringString = 32
	slotStringInt    = 24
	heapTableEntry   = (24 + 1) * 16 / 7
)
