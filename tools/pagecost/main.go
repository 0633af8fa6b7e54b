//go:build linux

// Command pagecost measures what it costs this machine to bring a page of
// memory into a process: the first touch of a file's mapped page (a page
// fault), of an anonymous page, a pread of a page, and the same pages made
// present in bulk with madvise(MADV_POPULATE_READ / _WRITE). A CLI search
// in a process of its own spent a third to a half of its time on first
// touches (docs/benchmarks.md, "A small page cache, not a mapped index"),
// so its figures from two machines compare only with these beside them:
// on the benchmark VM a fault cost eight times a pread.
//
//	go run ./tools/pagecost [-pages N] [-rounds R] FILE
//
// FILE is a large file, read whole first so that its pages are in the
// page cache (a Recall index is a good one: its pages are what a search
// reads). Each figure is the median of R rounds, in microseconds per
// 4 KiB page.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

const (
	pageSize = 4096
	// madvise advice values of Linux 5.14 (not in package syscall).
	madvPopulateRead  = 22
	madvPopulateWrite = 23
	madvHugepage      = 14
	hugePage          = 2 << 20
)

var sink byte // what the touches read, so that they are not compiled away

func main() {
	pages := flag.Int("pages", 2000, "pages per measurement")
	rounds := flag.Int("rounds", 5, "rounds; each figure is their median")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: pagecost [-pages N] [-rounds R] FILE\n\nFILE: a large file (a Recall index) to map; it is read whole first.")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *pages < 1 || *rounds < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *pages, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "pagecost:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, path string, n, rounds int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	total := int(st.Size() / pageSize)
	if total < 4*n {
		return fmt.Errorf("%s has %d pages; it needs at least %d (4 x -pages)", path, total, 4*n)
	}
	// Into the page cache: every figure below is of a cached page.
	if _, err := io.Copy(io.Discard, f); err != nil {
		return err
	}
	costs := map[string][]float64{}
	measures := []string{"file fault (random page)", "pread (random page)", "file, populated in bulk", "anonymous fault", "anonymous, populated in bulk", "anonymous, huge pages asked"}
	r := rand.New(rand.NewSource(1))
	for range rounds {
		random := r.Perm(total)[:n]
		for name, fn := range map[string]func() (time.Duration, error){
			measures[0]: func() (time.Duration, error) { return touchMapped(f, st.Size(), random) },
			measures[1]: func() (time.Duration, error) { return preadPages(f, random) },
			measures[2]: func() (time.Duration, error) { return populateMapped(f, st.Size(), r.Intn(total-n), n) },
			measures[3]: func() (time.Duration, error) { return anonymous(n, false) },
			measures[4]: func() (time.Duration, error) { return anonymous(n, true) },
			measures[5]: func() (time.Duration, error) { return anonymousHuge(n) },
		} {
			d, err := fn()
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			costs[name] = append(costs[name], float64(d.Nanoseconds())/1e3/float64(n))
		}
	}
	fmt.Fprintf(out, "%d pages x %d rounds of %s (%d MB), median us per 4 KiB page (transparent huge pages: %s):\n", n, rounds, path, st.Size()>>20, thpMode())
	for _, name := range measures {
		v := costs[name]
		slices.Sort(v)
		fmt.Fprintf(out, "  %-30s %7.2f\n", name, v[len(v)/2])
	}
	return nil
}

// touchMapped maps the file afresh and reads one byte of each page.
func touchMapped(f *os.File, size int64, pages []int) (time.Duration, error) {
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer syscall.Munmap(m)
	start := time.Now()
	for _, p := range pages {
		sink += m[p*pageSize]
	}
	return time.Since(start), nil
}

// preadPages reads each page with a system call into one buffer.
func preadPages(f *os.File, pages []int) (time.Duration, error) {
	buf := make([]byte, pageSize)
	start := time.Now()
	for _, p := range pages {
		if _, err := f.ReadAt(buf, int64(p)*pageSize); err != nil {
			return 0, err
		}
		sink += buf[0]
	}
	return time.Since(start), nil
}

// populateMapped maps the file afresh and makes n pages from first on
// present with one madvise call.
func populateMapped(f *os.File, size int64, first, n int) (time.Duration, error) {
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer syscall.Munmap(m)
	start := time.Now()
	if err := syscall.Madvise(m[first*pageSize:(first+n)*pageSize], madvPopulateRead); err != nil {
		return 0, fmt.Errorf("madvise(MADV_POPULATE_READ) needs Linux 5.14: %w", err)
	}
	return time.Since(start), nil
}

// anonymous maps n fresh anonymous pages and writes each (bulk: makes
// them present with one madvise call first, and counts that call).
func anonymous(n int, bulk bool) (time.Duration, error) {
	m, err := syscall.Mmap(-1, 0, n*pageSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return 0, err
	}
	defer syscall.Munmap(m)
	start := time.Now()
	if bulk {
		if err := syscall.Madvise(m, madvPopulateWrite); err != nil {
			return 0, fmt.Errorf("madvise(MADV_POPULATE_WRITE) needs Linux 5.14: %w", err)
		}
	}
	for i := range n {
		m[i*pageSize] = 1
	}
	return time.Since(start), nil
}

// anonymousHuge maps n fresh anonymous pages aligned to a huge page,
// asks for huge pages (MADV_HUGEPAGE, counted) and writes each page:
// where the kernel gives them (transparent huge pages "madvise" or
// "always"), one fault brings in 512 pages.
func anonymousHuge(n int) (time.Duration, error) {
	size := (n*pageSize + hugePage - 1) / hugePage * hugePage
	m, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return 0, err
	}
	defer syscall.Munmap(m)
	off := 0
	for (uintptr(unsafe.Pointer(&m[0]))+uintptr(off))%hugePage != 0 {
		off += pageSize
	}
	r := m[off : off+size]
	start := time.Now()
	if err := syscall.Madvise(r, madvHugepage); err != nil {
		return 0, fmt.Errorf("madvise(MADV_HUGEPAGE): %w", err)
	}
	for i := range n {
		r[i*pageSize] = 1
	}
	return time.Since(start), nil
}

// thpMode is the kernel's transparent huge page mode ("always",
// "madvise" or "never"), or "unknown".
func thpMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return "unknown"
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return "unknown"
	}
	return s[i+1 : j]
}
