package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Client speaks to one kernel. Requests on the shell channel (Execute,
// KernelInfo) run one at a time; Interrupt and Shutdown go on the control
// channel, so they are heard while an execution is running.
type Client struct {
	info    ConnectionInfo
	signer  signer
	session string
	life    context.Context // ends with Close
	cancel  context.CancelFunc

	shell, control, iopub zmq4.Socket
	shellIn, controlIn    chan message
	iopubIn               chan message

	shellMu, controlMu sync.Mutex
}

// reconnect has a socket dial again when its connection ends, as libzmq
// does: a kernel may drop a connection (a restart, a tunnel's hiccup).
var reconnect = zmq4.WithAutomaticReconnect(true)

// Dial connects to the kernel's shell, control and iopub sockets and
// waits until the kernel answers and its iopub messages arrive: a SUB
// socket misses what is published before its subscription reaches the
// kernel, so the first execution's output could otherwise be lost.
func Dial(ctx context.Context, info ConnectionInfo) (*Client, error) {
	if err := info.check(); err != nil {
		return nil, fmt.Errorf("kernel connection: %w", err)
	}
	life, cancel := context.WithCancel(context.Background())
	c := &Client{
		info: info, signer: signer{key: []byte(info.Key)}, session: newID(), life: life, cancel: cancel,
		shell:     zmq4.NewDealer(life, zmq4.WithID(zmq4.SocketIdentity(newID())), reconnect),
		control:   zmq4.NewDealer(life, zmq4.WithID(zmq4.SocketIdentity(newID())), reconnect),
		iopub:     zmq4.NewSub(life, reconnect),
		shellIn:   make(chan message, 64),
		controlIn: make(chan message, 16),
		iopubIn:   make(chan message, 256),
	}
	if err := c.connect(); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.waitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) connect() error {
	for _, s := range []struct {
		sock zmq4.Socket
		port int
		name string
	}{{c.shell, c.info.ShellPort, "shell"}, {c.control, c.info.ControlPort, "control"}, {c.iopub, c.info.IOPubPort, "iopub"}} {
		if err := s.sock.Dial(c.info.endpoint(s.port)); err != nil {
			return fmt.Errorf("kernel %s channel at %s: %w", s.name, c.info.endpoint(s.port), err)
		}
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		return fmt.Errorf("kernel iopub subscription: %w", err)
	}
	go c.read(c.shell, c.shellIn)
	go c.read(c.control, c.controlIn)
	go c.read(c.iopub, c.iopubIn)
	return nil
}

// read passes one socket's well-signed messages on until the socket
// closes; badly signed or malformed ones are dropped.
func (c *Client) read(sock zmq4.Socket, to chan<- message) {
	defer close(to)
	for {
		msg, err := sock.Recv()
		if err != nil {
			// zmq4 hands a connection's end (EOF) to Recv, then dials
			// again (WithAutomaticReconnect): only the client's own end
			// ends the channel.
			if c.life.Err() != nil {
				return
			}
			continue
		}
		m, err := c.signer.decode(msg.Frames)
		if err != nil {
			continue
		}
		to <- m
	}
}

func (c *Client) waitReady(ctx context.Context) error {
	for {
		h, err := c.send(c.shell, "kernel_info_request", struct{}{})
		if err != nil {
			return err
		}
		retry := time.NewTimer(time.Second)
		for heard := false; !heard; {
			select {
			case <-ctx.Done():
				retry.Stop()
				return fmt.Errorf("kernel at %s did not answer: %w", c.info.IP, ctx.Err())
			case <-retry.C:
				heard = true
			case m, ok := <-c.iopubIn:
				if !ok {
					return errors.New("kernel iopub channel closed")
				}
				if m.Parent.MsgID == h.MsgID {
					retry.Stop()
					return nil
				}
			case <-c.shellIn:
			}
		}
	}
}

func (c *Client) send(sock zmq4.Socket, msgType string, content any) (Header, error) {
	h, frames, err := c.signer.encode(c.session, msgType, content)
	if err != nil {
		return h, err
	}
	if err := sock.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		return h, fmt.Errorf("kernel %s: %w", msgType, err)
	}
	return h, nil
}

// request sends one request and returns the reply to it, skipping
// replies to older requests given up on.
func (c *Client) request(ctx context.Context, sock zmq4.Socket, in <-chan message, msgType string, content, reply any) error {
	h, err := c.send(sock, msgType, content)
	if err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("kernel %s: %w", msgType, ctx.Err())
		case m, ok := <-in:
			if !ok {
				return fmt.Errorf("kernel %s: channel closed", msgType)
			}
			if m.Parent.MsgID != h.MsgID {
				continue
			}
			if err := json.Unmarshal(m.Content, reply); err != nil {
				return fmt.Errorf("kernel %s: %w", m.Header.MsgType, err)
			}
			return nil
		}
	}
}

// Info is what kernel_info_reply says of the kernel.
type Info struct {
	Status                string `json:"status"`
	ProtocolVersion       string `json:"protocol_version"`
	Implementation        string `json:"implementation"`
	ImplementationVersion string `json:"implementation_version"`
	Banner                string `json:"banner"`
	LanguageInfo          struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"language_info"`
}

// KernelInfo asks the kernel what it is.
func (c *Client) KernelInfo(ctx context.Context) (Info, error) {
	c.shellMu.Lock()
	defer c.shellMu.Unlock()
	var info Info
	err := c.request(ctx, c.shell, c.shellIn, "kernel_info_request", struct{}{}, &info)
	return info, err
}

// Interrupt asks the kernel to interrupt what it runs, as Ctrl-C would.
func (c *Client) Interrupt(ctx context.Context) error {
	c.controlMu.Lock()
	defer c.controlMu.Unlock()
	var reply struct{ Status string }
	return c.request(ctx, c.control, c.controlIn, "interrupt_request", struct{}{}, &reply)
}

// Shutdown asks the kernel to end its process.
func (c *Client) Shutdown(ctx context.Context) error {
	c.controlMu.Lock()
	defer c.controlMu.Unlock()
	var reply struct{ Status string }
	return c.request(ctx, c.control, c.controlIn, "shutdown_request", map[string]bool{"restart": false}, &reply)
}

// Close disconnects; the kernel keeps running.
func (c *Client) Close() {
	c.cancel()
	for _, s := range []zmq4.Socket{c.shell, c.control, c.iopub} {
		_ = s.Close()
	}
}

// Completeness is is_complete_reply's verdict on a piece of input: a
// line-at-a-time prompt sends the lines typed so far and reads on while
// the kernel says "incomplete", as IPython's own console does.
type Completeness struct {
	Status string `json:"status"` // complete, incomplete, invalid or unknown
	Indent string `json:"indent"` // for incomplete: the next line's indent
}

// IsComplete asks whether code is a whole input the kernel would run.
func (c *Client) IsComplete(ctx context.Context, code string) (Completeness, error) {
	c.shellMu.Lock()
	defer c.shellMu.Unlock()
	var verdict Completeness
	err := c.request(ctx, c.shell, c.shellIn, "is_complete_request", map[string]string{"code": code}, &verdict)
	return verdict, err
}

// Heartbeat pings the kernel's heartbeat channel, which the kernel echoes
// from a thread of its own even while it runs code: an error means the
// kernel did not answer before ctx ended (it died, or its host went away).
func (c *Client) Heartbeat(ctx context.Context) error {
	if c.info.HBPort <= 0 {
		return nil // a connection file without one: nothing to ask
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := zmq4.NewReq(ctx, zmq4.WithDialerMaxRetries(1))
	defer req.Close()
	done := make(chan error, 1)
	go func() {
		if err := req.Dial(c.info.endpoint(c.info.HBPort)); err != nil {
			done <- err
			return
		}
		ping := []byte(newID())
		if err := req.Send(zmq4.NewMsg(ping)); err != nil {
			done <- err
			return
		}
		_, err := req.Recv()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("kernel heartbeat: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kernel heartbeat: %w", ctx.Err())
	}
}
