package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// store is the whole keyspace and the commands redis-benchmark and
// bench/compare send.
type store struct {
	mu sync.RWMutex
	m  map[string][]byte
}

// replyWriter is where do writes replies: a bufio.Writer on a connection, or
// the event loop's output buffer.
type replyWriter interface {
	io.Writer
	io.StringWriter
}

// errProtocol ends a connection that sent something this server does not parse.
var errProtocol = errors.New("protocol error")

// Limits that keep a malformed request from allocating without bound.
const (
	maxArgs = 1024
	maxBulk = 64 << 20
)

// serve answers one connection until it closes or errs.
func (s *store) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 16<<10)
	w := bufio.NewWriterSize(conn, 16<<10)
	var args [][]byte
	for {
		var err error
		args, err = readCommand(r, args[:0])
		if err != nil {
			return
		}
		s.do(w, args)
		// Reply in one write per batch of pipelined commands.
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// do runs one command, writing its reply to w.
func (s *store) do(w replyWriter, args [][]byte) {
	if len(args) == 0 {
		return
	}
	switch strings.ToUpper(string(args[0])) {
	case "GET":
		if len(args) != 2 {
			w.WriteString("-ERR wrong number of arguments\r\n")
			return
		}
		s.mu.RLock()
		v, ok := s.m[string(args[1])]
		s.mu.RUnlock()
		if !ok {
			w.WriteString("$-1\r\n")
			return
		}
		fmt.Fprintf(w, "$%d\r\n", len(v))
		w.Write(v)
		w.WriteString("\r\n")
	case "SET":
		if len(args) != 3 {
			w.WriteString("-ERR wrong number of arguments\r\n")
			return
		}
		v := bytes.Clone(args[2])
		s.mu.Lock()
		s.m[string(args[1])] = v
		s.mu.Unlock()
		w.WriteString("+OK\r\n")
	case "PING":
		w.WriteString("+PONG\r\n")
	case "ECHO": // redis-cli --pipe ends its stream with one
		if len(args) != 2 {
			w.WriteString("-ERR wrong number of arguments\r\n")
			return
		}
		fmt.Fprintf(w, "$%d\r\n%s\r\n", len(args[1]), args[1])
	case "FLUSHALL", "FLUSHDB":
		s.mu.Lock()
		s.m = map[string][]byte{}
		s.mu.Unlock()
		w.WriteString("+OK\r\n")
	case "DBSIZE":
		s.mu.RLock()
		n := len(s.m)
		s.mu.RUnlock()
		fmt.Fprintf(w, ":%d\r\n", n)
	case "CONFIG":
		// redis-benchmark reads save and appendonly at start; an empty
		// value of each keeps it quiet.
		if len(args) == 3 && strings.EqualFold(string(args[1]), "GET") {
			fmt.Fprintf(w, "*2\r\n$%d\r\n%s\r\n$0\r\n\r\n", len(args[2]), args[2])
			return
		}
		w.WriteString("*0\r\n")
	default:
		fmt.Fprintf(w, "-ERR unknown command '%s'\r\n", args[0])
	}
}

// readCommand reads one multibulk or inline command from r, reusing args.
func readCommand(r *bufio.Reader, args [][]byte) ([][]byte, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 || line[0] != '*' {
		for _, f := range bytes.Fields(line) {
			args = append(args, bytes.Clone(f))
		}
		return args, nil
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n < 0 || n > maxArgs {
		return nil, errProtocol
	}
	for range n {
		line, err := readLine(r)
		if err != nil {
			return nil, err
		}
		if len(line) == 0 || line[0] != '$' {
			return nil, errProtocol
		}
		size, err := strconv.Atoi(string(line[1:]))
		if err != nil || size < 0 || size > maxBulk {
			return nil, errProtocol
		}
		arg := make([]byte, size+2)
		if _, err := io.ReadFull(r, arg); err != nil {
			return nil, err
		}
		args = append(args, arg[:size])
	}
	return args, nil
}

// readLine returns a line without its CRLF; the slice is valid until the
// next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// parseCommand parses one command at the start of buf, for the event loop.
// It returns the arguments (slices of buf), the bytes consumed, and
// consumed 0 when buf does not hold a whole command yet.
func parseCommand(buf []byte, args [][]byte) ([][]byte, int, error) {
	end := bytes.IndexByte(buf, '\n')
	if end < 0 {
		return args, 0, nil
	}
	line := bytes.TrimRight(buf[:end], "\r")
	if len(line) == 0 || line[0] != '*' {
		return append(args, bytes.Fields(line)...), end + 1, nil
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n < 0 || n > maxArgs {
		return nil, 0, errProtocol
	}
	pos := end + 1
	for range n {
		end := bytes.IndexByte(buf[pos:], '\n')
		if end < 0 {
			return args, 0, nil
		}
		line := bytes.TrimRight(buf[pos:pos+end], "\r")
		if len(line) == 0 || line[0] != '$' {
			return nil, 0, errProtocol
		}
		size, err := strconv.Atoi(string(line[1:]))
		if err != nil || size < 0 || size > maxBulk {
			return nil, 0, errProtocol
		}
		pos += end + 1
		if len(buf)-pos < size+2 {
			return args, 0, nil
		}
		args = append(args, buf[pos:pos+size])
		pos += size + 2
	}
	return args, pos, nil
}
