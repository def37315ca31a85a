
4
	c0/logitsPlaceholder*
dtype0*
shape:
g
c0/feed_logitsConst*
dtype0*A
value8B6"(Wj}¾Å?0“¾Üïd>ý„É?ò”œ?3dY?ì¥ô>È]Ä>.sž¿
'
c0/op
LogSoftmax	c0/logits*
T0
a
c0/want0Const*
dtype0*A
value8B6"(HK0À|Ðw¿¤Ú2À¤%ÀŽÈn¿°S|¿°®¿O•Ý¿X§é¿ü˜\À"ª