// NoOp and the internal transfer ops that graph partitioning inserts at
// device boundaries: _Send/_Recv (device memory) and _HostSend/_HostRecv
// (host memory). Names and attrs are TensorFlow's (core/ops/no_op.cc,
// core/ops/sendrecv_ops.cc). A send and its recv agree on tensor_name,
// send_device, send_device_incarnation and recv_device, which form the
// rendezvous key.
#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace graphrun {

REGISTER_OP("NoOp").SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("_Send")
    .Input("tensor: T")
    .Attr("T: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("_Recv")
    .Output("tensor: tensor_type")
    .Attr("tensor_type: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

REGISTER_OP("_HostSend")
    .Input("tensor: T")
    .Attr("T: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::NoOutputs);

REGISTER_OP("_HostRecv")
    .Output("tensor: tensor_type")
    .Attr("tensor_type: type")
    .Attr("tensor_name: string")
    .Attr("send_device: string")
    .Attr("send_device_incarnation: int")
    .Attr("recv_device: string")
    .Attr("client_terminated: bool = false")
    .SetIsStateful()
    .SetShapeFn(shape_fns::UnknownShape);

}  // namespace graphrun
