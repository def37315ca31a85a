
6
c0/values_0Placeholder*
dtype0*
shape:
Y
c0/feed_values_0Const*
dtype0*1
value(B&"ך¶¿r₪=¿Y$²?¡€®¿¾¿ְל§¿
6
c0/values_1Placeholder*
dtype0*
shape:
Y
c0/feed_values_1Const*
dtype0*1
value(B&"ך6ְr₪½¿Y$2@¡€.ְ>ְְל'ְ
E
c0/opPackc0/values_0c0/values_1*
N*
T0*

axis
m
c0/want0Const*
dtype0*M
valueDBB"0ך¶¿r₪=¿Y$²?ך6ְr₪½¿Y$2@¡€®¿¾¿ְל§¿¡€.ְ>ְְל'ְ"×